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

    /// `sql` as a transaction of its own, asked to go as the sync's implicit transaction.
    @discardableResult
    static func alone(
        _ connection: Connection, _ sql: String, isolation: IsolationLevel? = nil
    ) throws -> QueryResult {
        try connection.withTransaction(isolation: isolation, beginWithFirstStatement: true) { connection in
            connection.commitWithNextStatement(asImplicitTransaction: true)
            return try connection.query(sql)
        }
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

    @Test func aTransactionOfOneStatementIsTheSyncsImplicitTransaction() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int primary key); insert into t values (1)")
            // Failing: rolled back by the sync, with no ROLLBACK to send (an explicit BEGIN would need one).
            var before = connection.roundTrips
            #expect {
                try Self.alone(connection, "insert into t values (2), (1)")
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .uniqueViolation
            }
            #expect(connection.roundTrips - before == 1)
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(schema) == 1)
            // Succeeding: committed, in the server's default isolation, as a plain BEGIN would have it.
            before = connection.roundTrips
            let isolation = try Self.alone(
                connection, "with i as (insert into t values (2)) select current_setting('transaction_isolation')"
            ).decode(String.self, row: 0, column: 0)
            #expect(isolation == "read committed")
            #expect(connection.roundTrips - before == 1)
            #expect(try Self.count(schema) == 2)
            // A BEGIN that sets anything is sent as it is.
            let serializable = try Self.alone(
                connection, "select current_setting('transaction_isolation')", isolation: .serializable
            ).decode(String.self, row: 0, column: 0)
            #expect(serializable == "serializable")
        }
    }

    @Test func afterRowsReadOneByOneTheNextTransactionGetsItsRowsWhole() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            for round in 0..<2 {
                // Single-row mode, which libpq 15 keeps for a pipeline's first command: the next transaction
                // goes with its BEGIN, still in one round trip.
                #expect(try connection.queryRows("select n from t") { _ in } == 2 * round)
                let before = connection.roundTrips
                let rows = try Self.alone(connection, "insert into t values (1), (2) returning n").rowCount
                #expect(rows == 2)
                #expect(connection.roundTrips - before == 1)
            }
            #expect(try Self.count(schema) == 4)
        }
    }

    @Test func anImplicitTransactionFailsAndIsLostAsACommitSentAloneWould() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute(
                "create table t (n int, unique (n) deferrable initially deferred); insert into t values (1)")
            // Checked when the sync commits: the server's error, nothing committed.
            #expect {
                try Self.alone(connection, "insert into t values (1)")
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .uniqueViolation
            }
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(schema) == 1)
            // A pipeline of several statements is one transaction too: the second's failure undoes the first's.
            #expect {
                try connection.withTransaction(beginWithFirstStatement: true) { connection in
                    connection.commitWithNextStatement(asImplicitTransaction: true)
                    _ = try connection.pipelined { sender in
                        try sender.send("insert into t values (2)")
                        try sender.send("select 1 / 0")
                    }
                }
            } throws: { error in
                (error as? PipelineError)?.error.sqlState == SQLState(rawValue: "22012")
            }
            #expect(try Self.count(schema) == 1)
            // The connection lost once the sync went out: the outcome is unknown.
            #expect {
                try Self.alone(connection, "select pg_terminate_backend(pg_backend_pid())")
            } throws: { error in
                (error as? LibPQError)?.code == .commitOutcomeUnknown
            }
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
