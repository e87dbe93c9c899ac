import CLibPQ

extension Connection {
    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK (then rethrow) when it throws.
    ///
    /// ```swift
    /// try connection.withTransaction(isolation: .serializable) { connection in
    ///     try connection.query("update account set balance = balance - $1 where id = $2", [amount, id])
    /// }
    /// ```
    /// Called inside a transaction it uses a savepoint instead (the isolation level and `readOnly` of the
    /// outer transaction apply). If `body` swallowed a server error, the transaction cannot commit: it is
    /// rolled back and `.transactionAborted` is thrown.
    /// - Throws: whatever `body` throws; ``DatabaseError`` from BEGIN/COMMIT (e.g. a serialization
    ///   failure); ``LibPQError`` `.commitOutcomeUnknown` when the connection broke while COMMIT was in
    ///   flight or its reply was a connection error (the transaction may or may not have committed; it is
    ///   never retried here), `.transactionEndedEarly` when `body` ran COMMIT or ROLLBACK itself,
    ///   `.connectionLost`, `.connectionClosed` or `.transactionAborted`.
    ///
    /// With `beginWithFirstStatement`, `BEGIN` is not sent on its own: it goes with the body's first statement
    /// (in the same pipeline for ``query(_:_:)`` and pipelined statements, in the same text for
    /// ``execute(_:)``), which saves a round trip; a body that sends nothing costs none, and no `COMMIT`.
    @discardableResult
    package func withTransaction<T>(
        isolation: IsolationLevel? = nil, readOnly: Bool = false, beginWithFirstStatement: Bool = false,
        _ body: (Connection) throws -> T
    ) throws -> T {
        let handle = try requireHandle()
        if PQtransactionStatus(handle) == PQTRANS_INTRANS || pendingBegin != nil {
            return try withSavepoint(body)
        }
        pipelinedCommit = .none
        defer { pipelinedCommit = .forbidden }
        var begin = Self.plainBegin
        if let isolation { begin += " ISOLATION LEVEL \(isolation.sql)" }
        if readOnly { begin += " READ ONLY" }
        if beginWithFirstStatement {
            pendingBegin = begin
        } else {
            try execute(begin)
        }
        let value: T
        do {
            value = try body(self)
        } catch {
            // Never begun on the server: nothing to roll back. Committed with the last statement: nothing
            // left to roll back either (the caller's check failed on a statement that changed nothing).
            if pendingBegin != nil {
                pendingBegin = nil
            } else if pipelinedCommit != .committed {
                rollbackQuietly()
            }
            throw error
        }
        if pendingBegin != nil {
            pendingBegin = nil
            return value
        }
        if pipelinedCommit == .committed { return value }
        try commit()
        return value
    }

    /// Sends the transaction's `COMMIT` in the same pipeline as the next statement (or pipeline), after it:
    /// one round trip for the last statement and the commit. Call it inside
    /// ``withTransaction(isolation:readOnly:beginWithFirstStatement:_:)`` just before the transaction's last
    /// statement; outside a transaction it does nothing.
    ///
    /// The server commits unless a statement of that pipeline fails (the `COMMIT` is then skipped, and the
    /// transaction rolled back as usual), so the caller must know that whatever the statement's result, its
    /// effect may stand: a check of the result that throws afterwards cannot undo it. A connection lost once
    /// the `COMMIT` was sent is `LibPQError(.commitOutcomeUnknown)`, as for a `COMMIT` sent alone.
    ///
    /// With `asImplicitTransaction`, a transaction that has not begun yet (its plain `BEGIN` still pending, so
    /// that the next statement or pipeline is all of it) is sent without `BEGIN` and `COMMIT`, as the implicit
    /// transaction that the pipeline's sync commits. It is the same transaction: the server's default
    /// isolation (as a plain `BEGIN` has), a failure rolls everything back, a reply lost once the sync went out
    /// leaves the outcome unknown; the server parses, runs and answers two statements fewer, and a failure
    /// leaves the connection idle with no `ROLLBACK` to send. Only for statements that need no transaction
    /// block (`SAVEPOINT`, `LOCK TABLE` and `SET LOCAL` do). A `BEGIN` that sets an isolation level or
    /// read-only mode is sent as usual.
    package func commitWithNextStatement(asImplicitTransaction: Bool = false) {
        guard pipelinedCommit == .none, pendingBegin != nil || transactionStatus == .inTransaction else { return }
        pipelinedCommit = asImplicitTransaction ? .requestedImplicitly : .requested
    }

    /// Whether the current transaction's `COMMIT` already went with its last statement and succeeded.
    package var committedWithLastStatement: Bool { pipelinedCommit == .committed }

    /// Whether the next statement (or pipeline) carries the transaction's `COMMIT`
    /// (``commitWithNextStatement(asImplicitTransaction:)`` was called, and nothing was sent since).
    package var commitGoesWithNextStatement: Bool { pipelinedCommit.isRequested }

    /// Takes a `COMMIT` sent with the last statement, whose reply was lost (`.commitOutcomeUnknown`), as
    /// committed: the caller found out on another connection that the transaction did commit. The
    /// transaction is over; ``withTransaction(isolation:readOnly:beginWithFirstStatement:_:)`` then returns
    /// the body's value and sends nothing more.
    package func adoptResolvedCommit() {
        guard pipelinedCommit == .sent || pipelinedCommit.isRequested else { return }
        pipelinedCommit = .committed
    }

    /// A `BEGIN` that sets nothing: the server's defaults, as the implicit transaction of a pipeline's sync has
    /// them (see ``commitWithNextStatement(asImplicitTransaction:)``).
    static let plainBegin = "BEGIN"

    /// The `BEGIN` still to be sent, which the caller sends now, with its statement.
    func takePendingBegin() -> String? {
        defer { pendingBegin = nil }
        return pendingBegin
    }

    /// Sends a pending `BEGIN` on its own, for a call that cannot carry it (a COPY, single-row reads).
    func sendPendingBegin() throws {
        guard let begin = takePendingBegin() else { return }
        try execute(begin)
    }

    /// COMMIT, telling a lost reply apart from a failed commit.
    private func commit() throws {
        let handle = try requireHandle()
        switch PQtransactionStatus(handle) {
        case PQTRANS_INTRANS:
            break
        case PQTRANS_INERROR:
            rollbackQuietly()
            throw LibPQError(
                .transactionAborted,
                "the transaction failed earlier (an error was caught inside it) and was rolled back")
        case PQTRANS_IDLE where PQstatus(handle) == CONNECTION_OK:
            throw LibPQError(
                .transactionEndedEarly,
                "the body of withTransaction ended the transaction itself (it ran COMMIT or ROLLBACK); what that "
                    + "statement did stands, and withTransaction sent no COMMIT")
        default:
            // Broken (or busy) before our COMMIT was sent: the server rolls back an abandoned transaction,
            // but the body may have committed on its own before that.
            throw clientError(
                handle,
                "the transaction (before withTransaction sent COMMIT; nothing was committed unless the body ran "
                    + "COMMIT itself)")
        }
        do {
            try execute("COMMIT")
        } catch {
            throw Self.commitError(error, connectionBroken: isBroken)
        }
    }

    /// The error to report for a failed COMMIT: `.commitOutcomeUnknown` when the connection broke or the
    /// server's reply was a connection error (a FATAL 57P01/57P02 or class 08 can arrive as COMMIT's reply
    /// while libpq still says `CONNECTION_OK`), since the transaction may have committed; otherwise `error`.
    static func commitError(_ error: any Error, connectionBroken: Bool) -> any Error {
        let lost =
            connectionBroken || (error as? LibPQError)?.code == .connectionLost
            || (error as? DatabaseError)?.sqlState.isConnectionError == true
        guard lost else { return error }
        return LibPQError(
            .commitOutcomeUnknown,
            "the connection was lost while COMMIT was in flight; the transaction may or may not have committed: "
                + "\(error)")
    }

    /// Runs `body` under a savepoint of the current transaction.
    private func withSavepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        let name = Connection.quoteIdentifier("libpq_savepoint_\(savepointDepth())")
        try execute("SAVEPOINT \(name)")
        // The outer transaction's COMMIT is the outer body's to send: not inside a savepoint.
        let outer = pipelinedCommit
        pipelinedCommit = .forbidden
        defer { pipelinedCommit = outer }
        do {
            let value = try body(self)
            try execute("RELEASE SAVEPOINT \(name)")
            return value
        } catch {
            if !isBroken { try? execute("ROLLBACK TO SAVEPOINT \(name); RELEASE SAVEPOINT \(name)") }
            throw error
        }
    }

    /// A counter for unique savepoint names; nesting depth is enough since names are released in order.
    private func savepointDepth() -> Int {
        nextSavepoint += 1
        return nextSavepoint
    }

    /// ROLLBACK if the connection still works; errors are ignored because the caller rethrows the cause.
    private func rollbackQuietly() {
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) != PQTRANS_IDLE else {
            return
        }
        try? execute("ROLLBACK")
    }
}

/// Where a transaction's `COMMIT` sent with its last statement stands.
enum PipelinedCommit {
    /// Sent alone at the end, as usual.
    case none
    /// To go with the next statement or pipeline.
    case requested
    /// To go with the next statement or pipeline; when that is the whole transaction (its plain `BEGIN` still
    /// pending), as the implicit transaction of the pipeline's sync, without `BEGIN` and `COMMIT`.
    case requestedImplicitly
    /// Queued in a pipeline whose results are not all in.
    case sent
    /// Run: the transaction is over.
    case committed
    /// Inside a savepoint, or outside ``Connection/withTransaction(isolation:readOnly:beginWithFirstStatement:_:)``:
    /// never requested.
    case forbidden
}

extension PipelinedCommit {
    /// Whether the `COMMIT` is to go with the next statement or pipeline.
    var isRequested: Bool { self == .requested || self == .requestedImplicitly }
}
