import LibPQ
import Testing

@Suite struct TransactionTests {
    struct Expected: Error {}

    static func count(_ connection: Connection) throws -> Int64 {
        try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0)
    }

    @Test func commitAndRollback() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            let value = try connection.withTransaction(isolation: .serializable) { connection in
                #expect(connection.transactionStatus == .inTransaction)
                #expect(
                    try connection.query("show transaction_isolation").decode(String.self, row: 0, column: 0)
                        == "serializable")
                try connection.query("insert into t values (1)")
                return 7
            }
            #expect(value == 7)
            #expect(connection.transactionStatus == .idle)
            let other = try TestDatabase.connect(schema: schema)
            defer { other.close() }
            #expect(try Self.count(other) == 1)  // committed: visible elsewhere

            #expect(throws: Expected.self) {
                try connection.withTransaction { connection in
                    try connection.query("insert into t values (2)")
                    throw Expected()
                }
            }
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(connection) == 1)
        }
    }

    @Test func readOnlyAndSwallowedErrors() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            do {
                try connection.withTransaction(isolation: .repeatableRead, readOnly: true) { connection in
                    try connection.query("insert into t values (1)")
                }
                Issue.record("a write in a read-only transaction must fail")
            } catch let error as DatabaseError {
                #expect(error.sqlState == .readOnlySQLTransaction)
            }
            do {
                try connection.withTransaction { connection in
                    try connection.query("insert into t values (1)")
                    _ = try? connection.query("select 1/0")
                }
                Issue.record("a failed transaction must not report success")
            } catch let error as LibPQError {
                #expect(error.code == .transactionAborted)
            }
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(connection) == 0)
        }
    }

    @Test func nestedTransactionUsesASavepoint() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            try connection.withTransaction { connection in
                try connection.query("insert into t values (1)")
                _ = try? connection.withTransaction { connection in
                    try connection.query("insert into t values (2)")
                    throw Expected()
                }
                try connection.withTransaction { connection in try connection.query("insert into t values (3)") }
            }
            let result = try connection.query("select array_agg(n order by n) from t")
            #expect(try result.decode([Int32].self, row: 0, column: 0) == [1, 3])
        }
    }

    @Test func connectionLostDuringCommitIsOutcomeUnknown() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            do {
                try connection.withTransaction { connection in
                    try connection.query("insert into t values (1)")
                    // The backend dies after the body; the client only finds out when COMMIT is sent.
                    try ConnectionTests.terminate(connection, schema: schema)
                }
                Issue.record("COMMIT on a terminated backend must fail")
            } catch let error as LibPQError {
                #expect(error.code == .commitOutcomeUnknown)
            }
            #expect(connection.isBroken)
        }
    }
}
