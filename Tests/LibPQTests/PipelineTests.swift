import Foundation
import LibPQ
import Testing

@Suite struct PipelineTests {
    @Test func thousandStatementsInOnePipeline() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n bigint primary key, label text)")
            var statements: [PipelineStatement] = []
            for n in 0..<999 {
                statements.append(
                    PipelineStatement(
                        "insert into t (n, label) values ($1, $2)",
                        [try PostgresValue(Int64(n)), try PostgresValue("row \(n)")]))
            }
            statements.append(PipelineStatement("select count(*), sum(n) from t"))
            let results = try connection.pipeline(statements)
            #expect(results.count == 1000)
            #expect(results[0].affectedRows == 1)
            #expect(results[998].commandTag == "INSERT 0 1")
            #expect(try results[999].decode(Int64.self, row: 0, column: 0) == 999)
            #expect(try results[999].decode(Decimal.self, row: 0, column: 1) == Decimal(999 * 998 / 2))
            #expect(try connection.query("select 1").rowCount == 1)  // out of pipeline mode again
        }
    }

    @Test func failureIsAttributedToItsStatement() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n bigint constraint t_pkey primary key)")
            // Statement 6 repeats the key of statement 2.
            let statements = try [0, 1, 2, 3, 4, 5, 2, 7, 8, 9].map { key in
                PipelineStatement("insert into t values ($1)", [try PostgresValue(Int64(key))])
            }
            do {
                _ = try connection.pipeline(statements)
                Issue.record("the duplicate key must fail the pipeline")
            } catch let error as PipelineError {
                #expect(error.index == 6)
                #expect(error.error.sqlState == .uniqueViolation)
                #expect(error.error.constraintName == "t_pkey")
                #expect(error.error.sql == "insert into t values ($1)")
            }
            // One sync = one implicit transaction: the earlier inserts were rolled back; the connection works.
            #expect(!connection.isBroken)
            #expect(connection.transactionStatus == .idle)
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 0)
            let again = try connection.pipeline([PipelineStatement("select $1::int4", [PostgresValue(Int32(7))])])
            #expect(try again[0].decode(Int32.self, row: 0, column: 0) == 7)
        }
    }

    @Test func unencodableStatementLeavesConnectionUsable() throws {
        try TestDatabase.withSchema { connection, _ in
            let tooMany = [PostgresValue](repeating: .null(.int4), count: 70_000)
            do {
                _ = try connection.pipeline([PipelineStatement("select 1"), PipelineStatement("select 2", tooMany)])
                Issue.record("70,000 parameters must be rejected")
            } catch let error as LibPQError {
                #expect(error.code == .encoding)
            }
            #expect(try connection.query("select 3").decode(Int32.self, row: 0, column: 0) == 3)
        }
    }

    @Test func emptyPipelineAndClosedConnection() throws {
        try TestDatabase.withSchema { connection, _ in
            let none = try connection.pipeline([])
            #expect(none.isEmpty)
            connection.close()
            #expect(throws: LibPQError.self) { try connection.pipeline([PipelineStatement("select 1")]) }
        }
    }
}
