@testable import LibPQ
import Testing

/// A transaction's COMMIT sent in the pipeline of its last statement (`commitWithNextStatement()`): one
/// round trip for BEGIN, the statement and COMMIT, with the error semantics of a COMMIT sent alone.
@Suite struct PipelinedCommitTests {
    static func count(_ schema: String, _ table: String = "t") throws -> Int64 {
        let other = try TestDatabase.connect(schema: schema)
        defer { other.close() }
        return try other.query("select count(*) from \(table)").decode(Int64.self, row: 0, column: 0)
    }

    @Test func theStatementAndItsCommitAreOneRoundTrip() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int primary key)")
            let before = connection.roundTrips
            let inserted = try connection.withTransaction(beginWithFirstStatement: true) { connection in
                connection.commitWithNextStatement()
                let result = try connection.query("insert into t values ($1) returning n", [PostgresValue(Int32(1))])
                #expect(connection.committedWithLastStatement)
                return try result.decode(Int32.self, row: 0, column: 0)
            }
            #expect(inserted == 1)
            #expect(connection.roundTrips - before == 1)
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(schema) == 1)
        }
    }

    @Test func aFailingStatementSkipsTheCommitAndRollsBack() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int primary key); insert into t values (1)")
            #expect {
                try connection.withTransaction(beginWithFirstStatement: true) { connection in
                    try connection.query("insert into t values (2)")
                    connection.commitWithNextStatement()
                    try connection.query("insert into t values (1)")
                }
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .uniqueViolation
            }
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(schema) == 1)
            #expect(try connection.query("select 1").rowCount == 1)
        }
    }

    @Test func aCommitThatFailsIsTheServersErrorWithNothingCommitted() throws {
        try TestDatabase.withSchema { connection, schema in
            // Checked at COMMIT: the statement succeeds, the COMMIT fails.
            try connection.execute(
                "create table t (n int, unique (n) deferrable initially deferred); insert into t values (1)")
            #expect {
                try connection.withTransaction(beginWithFirstStatement: true) { connection in
                    connection.commitWithNextStatement()
                    try connection.query("insert into t values (1)")
                }
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .uniqueViolation
            }
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(schema) == 1)
        }
    }

    @Test func aCheckThatThrowsAfterTheCommitLeavesWhatWasCommitted() throws {
        struct Refused: Error {}
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            #expect(throws: Refused.self) {
                try connection.withTransaction(beginWithFirstStatement: true) { connection in
                    connection.commitWithNextStatement()
                    _ = try connection.pipelined(
                        { try $0.send("insert into t values (1) returning n") }, each: { _, _ in throw Refused() })
                }
            }
            // The caller asked for the COMMIT with a statement whose effect may stand: it did.
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(schema) == 1)
        }
    }

    @Test func aConnectionLostOnceTheCommitWasSentIsOutcomeUnknown() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            #expect {
                try connection.withTransaction(beginWithFirstStatement: true) { connection in
                    try connection.query("insert into t values (1)")
                    connection.commitWithNextStatement()
                    try connection.query("select pg_terminate_backend(pg_backend_pid())")
                }
            } throws: { error in
                (error as? LibPQError)?.code == .commitOutcomeUnknown
            }
            #expect(try Self.count(schema) == 0)
        }
    }

    @Test func insideASavepointTheOuterCommitIsNotSentEarly() throws {
        struct Abandon: Error {}
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            #expect(throws: Abandon.self) {
                try connection.withTransaction(beginWithFirstStatement: true) { connection in
                    try connection.withTransaction { connection in
                        connection.commitWithNextStatement()
                        try connection.query("insert into t values (1)")
                        #expect(!connection.committedWithLastStatement)
                    }
                    throw Abandon()
                }
            }
            #expect(try Self.count(schema) == 0)
            // Outside a transaction it does nothing either.
            connection.commitWithNextStatement()
            try connection.query("insert into t values (2)")
            #expect(!connection.committedWithLastStatement)
            #expect(try Self.count(schema) == 1)
        }
    }
}
