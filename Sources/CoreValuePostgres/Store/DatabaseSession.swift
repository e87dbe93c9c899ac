import LibPQ

/// What the store's reads and writes need from one database connection: the seam between the store and
/// libpq. `Connection` is the real one; tests script one (`ScriptedSession`) to fail a save at any statement
/// (a connection lost during a COPY, a lost `COMMIT` reply) without a server.
///
/// Only ``StatementRunner`` calls it, and a ``SessionSource`` lends it for one call at a time.
protocol DatabaseSession: AnyObject {
    /// Round trips so far (see `Connection.roundTrips`).
    var roundTrips: Int { get }
    /// Statements prepared so far (see `Connection.statementsPrepared`).
    var statementsPrepared: Int { get }
    /// The backend's process ID and start time, as `pg_stat_activity` shows them (see
    /// `Connection.backendIdentity`); `nil` when unknown (behind a pooler, say).
    var backendIdentity: (pid: Int32, start: String)? { get }

    /// Runs one statement with binary parameters and results.
    func query(_ sql: String, _ parameters: [PostgresValue]) throws -> QueryResult
    /// Runs one row statement and hands its rows to `body` as they arrive; returns the number of rows.
    func queryRows(_ sql: String, _ parameters: [PostgresValue], _ body: (QueryResult) throws -> Void) throws -> Int
    /// Runs a binary `COPY ... TO STDOUT` and hands each row to `body`; returns the number of rows.
    func copyOutBinary(_ copySQL: String, _ body: (inout CopyRow) throws -> Void) throws -> Int
    /// Runs a binary `COPY ... FROM STDIN`, `body` writing its data (header and trailer are the session's);
    /// returns the number of rows the server copied.
    func copyIn(_ copySQL: String, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws -> Int
    /// Runs `body` in a transaction whose `BEGIN` goes with the first statement: `COMMIT` when it returns,
    /// rolled back when it throws (see `Connection.withTransaction(isolation:readOnly:beginWithFirstStatement:_:)`
    /// for the errors, among them `LibPQError(.commitOutcomeUnknown)` for a lost `COMMIT` reply).
    func transaction<T>(isolation: IsolationLevel?, readOnly: Bool, _ body: () throws -> T) throws -> T
    /// Sends the current transaction's `COMMIT` in the same pipeline as the next statement, after it; with
    /// `asImplicitTransaction`, a transaction that is all in that statement or pipeline goes without `BEGIN`
    /// and `COMMIT` (see `Connection.commitWithNextStatement(asImplicitTransaction:)`).
    func commitWithNextStatement(asImplicitTransaction: Bool)
    /// Whether the current transaction's `COMMIT` went with its last statement and succeeded.
    var committedWithLastStatement: Bool { get }
    /// Whether the next statement (or pipeline) carries the current transaction's `COMMIT`.
    var commitGoesWithNextStatement: Bool { get }
    /// Takes the `COMMIT` that went with the last statement, whose reply was lost, as committed (the store
    /// found out on another connection): the transaction ends without sending anything more.
    func adoptResolvedCommit()
    /// Sends every statement `body` sends without waiting, then hands each result to `each` in order as it
    /// arrives (one round trip). A failing statement throws `PipelineError`.
    func pipeline(
        _ body: (_ send: @escaping (String, [PostgresValue]) throws -> Void) throws -> Void,
        each: (Int, QueryResult) throws -> Void
    ) throws
    /// A way to cancel this session's running statement from another thread (a request that could not be
    /// sent changes nothing: the statement runs to its end).
    func makeCancel() throws -> @Sendable () -> Void
}

/// Lends a ``DatabaseSession`` for one call: the store's pool, or a test's scripted sessions.
protocol SessionSource: Sendable {
    /// Runs `body` with a session of its own, then takes the session back.
    func withSession<T>(_ body: (any DatabaseSession) throws -> T) throws -> T
}

extension Connection: DatabaseSession {
    func copyIn(_ copySQL: String, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws -> Int {
        try withCopyInBinary(copySQL) { writer in try body(writer.write) }
    }

    func transaction<T>(isolation: IsolationLevel?, readOnly: Bool, _ body: () throws -> T) throws -> T {
        try withTransaction(isolation: isolation, readOnly: readOnly, beginWithFirstStatement: true) { _ in
            try body()
        }
    }

    func pipeline(
        _ body: (_ send: @escaping (String, [PostgresValue]) throws -> Void) throws -> Void,
        each: (Int, QueryResult) throws -> Void
    ) throws {
        try withoutActuallyEscaping(each) { each in
            _ = try pipelined({ pipe in try body { sql, parameters in try pipe.send(sql, parameters) } }, each: each)
        }
    }

    func makeCancel() throws -> @Sendable () -> Void {
        let canceller = try makeCanceller()
        return { try? canceller.cancel() }
    }
}

extension ConnectionPool: SessionSource {
    func withSession<T>(_ body: (any DatabaseSession) throws -> T) throws -> T {
        try withConnection { try body($0) }
    }
}
