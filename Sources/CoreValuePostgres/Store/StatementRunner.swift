@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

/// Sends ``SQL`` on one connection, converting binds to wire values and counting statements.
final class StatementRunner {
    let connection: any DatabaseSession
    let counter: StatisticsCounter
    /// The async call this runner works for: no statement is sent once it is cancelled.
    let cancellation: CancellationToken?
    /// Where statement events go.
    let events: EventSink
    /// `statement_timeout` in milliseconds, set at the start of each transaction; `nil`: the server's.
    let statementTimeout: Int64?
    /// For a write transaction of a store that resolves lost commits: its commit identifier, written with
    /// its statements, and how a lost `COMMIT` reply is resolved (see `StatementRunner+Commits.swift`).
    let commits: CommitTracking?

    /// An object, not a struct: a runner is handed through every layer of a transaction and captured by
    /// their closures, and as a struct of six references each copy retained and released them all (about
    /// 3,000 instructions of a request's save).
    init(
        connection: any DatabaseSession, counter: StatisticsCounter, cancellation: CancellationToken? = nil,
        events: EventSink = EventSink(handler: nil), statementTimeout: Int64? = nil, commits: CommitTracking? = nil
    ) {
        self.connection = connection
        self.counter = counter
        self.cancellation = cancellation
        self.events = events
        self.statementTimeout = statementTimeout
        self.commits = commits
    }

    /// The same runner, writing `commits`' identifier with its statements.
    func withCommits(_ commits: CommitTracking?) -> StatementRunner {
        StatementRunner(
            connection: connection, counter: counter, cancellation: cancellation, events: events,
            statementTimeout: statementTimeout, commits: commits)
    }

    /// Runs one statement.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidValue`` for more than 65,535 parameters (the store's own
    ///   statements bind arrays and stay far below); the driver's errors (`DatabaseError` from the server).
    @discardableResult
    func run(_ sql: SQL) throws -> QueryResult {
        if let commits { return try runMarked(sql, commits) }
        return try send(sql)
    }

    /// Sends one statement as it is (``run(_:)`` without the commit identifier).
    @discardableResult
    func send(_ sql: SQL) throws -> QueryResult {
        let parameters = try self.parameters(of: sql)
        return try observed(sql) {
            let result = try connection.query(sql.text, parameters)
            return (result, result.rowCount > 0 ? result.rowCount : result.affectedRows)
        }
    }

    /// Runs one row statement and hands its rows to `body` as they arrive (`Connection.queryRows`): the
    /// rows are read while the server still sends the last ones, and no result holds all of them.
    ///
    /// - Throws: As ``run(_:)``; what `body` throws.
    func runRows(_ sql: SQL, _ body: (QueryResult) throws -> Void) throws {
        try sendPendingMarker()
        let parameters = try self.parameters(of: sql)
        try observed(sql) {
            let rows = try connection.queryRows(sql.text, parameters, body)
            return ((), rows)
        }
    }

    /// Runs one row statement as a binary COPY (`copyText`, ``SQL/binaryCopyText`` of `sql`) and hands its
    /// rows to `body` as they arrive (`Connection.copyOutBinary`). Counted and reported as `sql`: the
    /// statement with placeholders, not the literals.
    ///
    /// - Throws: `CancellationError`; the driver's errors; what `body` throws.
    func runCopyRows(_ sql: SQL, copyText: String, _ body: (inout CopyRow) throws -> Void) throws {
        try cancellation?.checkCancellation()
        try sendPendingMarker()
        try observed(sql) {
            let rows = try connection.copyOutBinary(copyText, body)
            return ((), rows)
        }
    }

    /// Runs a `COPY ... FROM STDIN (FORMAT binary)` (an ``SQL`` without binds) and hands `body` a function
    /// that writes COPY data (`Connection.withCopyInBinary`); returns the rows copied. Counted and reported as
    /// one statement.
    ///
    /// - Throws: `CancellationError`; ``PostgresStoreError/Code/invalidValue`` for a statement with binds;
    ///   the driver's errors; what `body` throws.
    func copyIn(_ sql: SQL, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws -> Int {
        try cancellation?.checkCancellation()
        guard sql.binds.isEmpty else {
            throw PostgresStoreError(.invalidValue, "a COPY statement takes no parameters: \(sql.text)")
        }
        try sendPendingMarker()
        return try observed(sql) {
            let copied = try connection.copyIn(sql.text, body)
            return (copied, copied)
        }
    }

    /// Counts a statement and reports it, with its duration and row count, to the event handler.
    private func observed<T>(_ sql: SQL, _ send: () throws -> (T, rows: Int)) throws -> T {
        counter.record { $0.statements += 1 }
        guard events.isActive else { return try send().0 }
        let started = ContinuousClock.now
        do {
            let (result, rows) = try send()
            events.send(
                StoreEvent(kind: .statement, sql: sql.text, duration: ContinuousClock.now - started, rowCount: rows))
            return result
        } catch {
            events.send(
                StoreEvent(kind: .statement, sql: sql.text, duration: ContinuousClock.now - started, error: error))
            throw error
        }
    }

    /// Sends the transaction's `COMMIT` with the next statement (see
    /// `Connection.commitWithNextStatement(asImplicitTransaction:)`): only before a last statement whose effect
    /// may stand whatever its result. A transaction that is all in that statement (a request's save) goes as
    /// the implicit transaction of its pipeline's sync, without `BEGIN` and `COMMIT`: the store's statements
    /// never need a transaction block (its `SET LOCAL statement_timeout` is sent first, with the `BEGIN`).
    func commitWithNextStatement() { connection.commitWithNextStatement(asImplicitTransaction: true) }

    /// Runs `body` in a transaction, its `BEGIN` sent with the first statement.
    func transaction<T>(isolation: IsolationLevel? = nil, readOnly: Bool = false, _ body: (StatementRunner) throws -> T)
        throws -> T
    {
        counter.record { $0.transactions += 1 }
        var produced: T?
        do {
            // BEGIN goes with the first statement (one round trip fewer); the error semantics are those of a
            // BEGIN sent alone.
            return try connection.transaction(isolation: isolation, readOnly: readOnly) {
                let runner = self
                if let statementTimeout {
                    // Transaction-scoped, so nothing outlives the transaction on a connection pgbouncer shares.
                    try runner.run(SQL(unsafeRaw: "SET LOCAL statement_timeout = \(statementTimeout)"))
                }
                let result = try body(runner)
                // Last chance for a cancelled async call: throwing here rolls back, so "cancelled" always means
                // "nothing committed". A cancellation after this point (or a COMMIT that went with the last
                // statement) is too late, and the call succeeds.
                if !connection.committedWithLastStatement { try cancellation?.checkCancellation() }
                produced = result
                return result
            }
        } catch  where error.isLostCommit {
            // The COMMIT sent alone lost its reply: the body's result stands if the transaction committed.
            guard let commits, let produced else { throw error }
            _ = try commits.resolve(commits.marker)
            return produced
        }
    }
}

extension StatementRunner {
    /// Sends a statement, and says what to do with its result once it arrives (see ``pipelined(_:)``).
    typealias Emit = (SQL, @escaping (QueryResult) throws -> Void) throws -> Void

    /// A statement's wire parameters, once the call is known not to be cancelled.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidValue`` for more than 65,535 parameters; `CancellationError`.
    private func parameters(of sql: SQL) throws -> [PostgresValue] {
        let binds = sql.binds
        guard binds.count <= 65_535 else {
            throw PostgresStoreError(.invalidValue, "a statement has \(binds.count) parameters; the limit is 65,535")
        }
        try cancellation?.checkCancellation()
        return try binds.map(BindEncoding.postgresValue)
    }

    /// Runs `body` in pipeline mode (see `Connection.pipelined(_:each:)`): every statement it emits goes out
    /// at once, without waiting for the one before, and each result is handed to its statement's handler as
    /// it arrives, then released. One round trip for all of them.
    ///
    /// - Throws: What `body` or a handler throws; the server's `DatabaseError` for the first failing
    ///   statement; the driver's errors.
    func pipelined(_ body: (_ emit: @escaping Emit) throws -> Void) throws {
        if let commits { return try markedPipeline(commits, body) }
        try plainPipelined(body)
    }

    /// ``pipelined(_:)`` without the commit identifier.
    func plainPipelined(_ body: (_ emit: @escaping Emit) throws -> Void) throws {
        try cancellation?.checkCancellation()
        var handlers: [(QueryResult) throws -> Void] = []
        do {
            try connection.pipeline(
                { send in
                    try body { [self] sql, handle in
                        let parameters = try self.parameters(of: sql)
                        counter.record { $0.statements += 1 }
                        let started = ContinuousClock.now
                        try send(sql.text, parameters)
                        handlers.append(handle)
                        // A pipelined statement's event times its sending; its result arrives with the others'.
                        if events.isActive {
                            events.send(
                                StoreEvent(kind: .statement, sql: sql.text, duration: ContinuousClock.now - started))
                        }
                    }
                },
                each: { index, result in
                    guard index < handlers.count else {
                        throw PostgresStoreError(
                            .unexpectedResult, "\(handlers.count) statements sent, a result for statement \(index)")
                    }
                    try handlers[index](result)
                })
        } catch let error as PipelineError {
            // The statement's own error, as `run(_:)` throws it: retries and conflicts are told apart by it.
            throw error.error
        }
    }
}
