import Foundation
import LibPQ
import Testing

/// `Connection.queryRows`: a statement's rows handed out one by one as they arrive (single-row mode).
@Suite struct RowStreamTests {
    @Test func rowsArriveOneByOneInOrderWithTheirColumns() throws {
        try TestDatabase.withSchema { connection, _ in
            var seen: [Int64] = []
            var names: [String] = []
            let count = try connection.queryRows(
                "select x::int8 as n, repeat('v', x) as text from generate_series(1, $1::int) x",
                [PostgresValue(Int32(2500))]
            ) { result in
                #expect(result.rowCount == 1)
                #expect(result.columns.map(\.name) == ["n", "text"])
                let number = try result.decode(Int64.self, row: 0, column: 0)
                #expect(try result.decode(String.self, row: 0, column: 1) == String(repeating: "v", count: Int(number)))
                seen.append(number)
                names = result.columns.map(\.name)
            }
            #expect(count == 2500)
            #expect(seen == Array(1...2500))
            #expect(names == ["n", "text"])
            #expect(connection.transactionStatus == .idle)
        }
    }

    @Test func aStatementWithoutRowsNeverCallsTheBody() throws {
        try TestDatabase.withSchema { connection, _ in
            var calls = 0
            let none = try connection.queryRows("select 1 where false") { _ in calls += 1 }
            let created = try connection.queryRows("create temporary table t (x int)") { _ in calls += 1 }
            #expect(none == 0 && created == 0)
            #expect(calls == 0)
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 0)
        }
    }

    /// The server fails the statement after it sent some rows: the error is thrown (never a short result), and
    /// the connection is idle and usable afterwards.
    @Test func aServerErrorAfterSomeRowsIsThrownAndTheConnectionStaysUsable() throws {
        try TestDatabase.withSchema { connection, _ in
            var seen = 0
            do {
                // Rows 1-4 are computed (and may be sent) before row 5 divides by zero.
                try connection.queryRows("select 10 / (5 - x) from generate_series(1, 10) x") { _ in seen += 1 }
                Issue.record("division by zero must fail the statement")
            } catch let error as DatabaseError {
                #expect(error.sqlState == SQLState(rawValue: "22012"))
                #expect(error.sql?.contains("generate_series") == true)
            }
            #expect(seen <= 4)
            #expect(connection.transactionStatus == .idle)
            #expect(try connection.query("select 41 + 1").decode(Int32.self, row: 0, column: 0) == 42)
        }
    }

    /// `body` throws on the third of many rows: the rest is read and dropped, and that error is thrown.
    @Test func anErrorOfTheBodyDrainsTheRestAndIsThrown() throws {
        struct Stop: Error {}
        try TestDatabase.withSchema { connection, _ in
            var seen = 0
            #expect(throws: Stop.self) {
                try connection.queryRows("select x from generate_series(1, 20000) x") { _ in
                    seen += 1
                    if seen == 3 { throw Stop() }
                }
            }
            #expect(seen == 3)
            #expect(connection.transactionStatus == .idle)
            var seven: Int32 = 0
            let rows = try connection.queryRows("select 7") { seven = try $0.decode(Int32.self, row: 0, column: 0) }
            #expect(rows == 1 && seven == 7)
        }
    }

    @Test func inATransactionAFailedStatementLeavesItToBeRolledBack() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("begin")
            #expect(throws: DatabaseError.self) {
                try connection.queryRows("select 1 / (x - 3) from generate_series(1, 5) x") { _ in }
            }
            #expect(connection.transactionStatus == .inError)
            try connection.execute("rollback")
            #expect(connection.transactionStatus == .idle)
        }
    }

    @Test func sqlWithANulCharacterIsAnEncodingErrorBeforeAnythingIsSent() throws {
        try TestDatabase.withSchema { connection, _ in
            do {
                try connection.queryRows("select 1\u{0}") { _ in }
                Issue.record("NUL in the SQL text must be refused")
            } catch let error as LibPQError {
                #expect(error.code == .encoding)
            }
            #expect(try connection.query("select 1").rowCount == 1)
        }
    }
}
