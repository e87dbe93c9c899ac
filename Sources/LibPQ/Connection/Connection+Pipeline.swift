import CLibPQ

extension Connection {
    /// Sends all statements in pipeline mode with one sync and returns one result per statement.
    ///
    /// The statements run in order without waiting for each other's replies (one round trip in total).
    /// Unless they are inside an explicit transaction, they run as one implicit transaction that ends at
    /// the sync: a failure rolls back the statements before it too. The connection leaves pipeline mode
    /// before this returns or throws.
    /// ```swift
    /// let results = try connection.pipeline([
    ///     PipelineStatement("insert into t values ($1)", [PostgresValue(Int64(1))]),
    ///     PipelineStatement("select count(*) from t"),
    /// ])
    /// ```
    /// Every statement's SQL and parameters are checked and encoded before anything is sent, so a statement
    /// that cannot be sent (too many parameters, a NUL character in its SQL) fails the call with nothing
    /// run. Should sending still fail part way on a connection that was idle, the statements already sent
    /// are rolled back: an aborting statement goes out before the sync, so the sync cannot commit them.
    /// - Throws: ``PipelineError`` with the failing statement's index and its ``DatabaseError`` (the
    ///   statements after it were skipped by the server); ``LibPQError`` `.encoding` naming the statement
    ///   that cannot be sent, `.pipelineFailed`, `.connectionLost` or `.connectionClosed`.
    package func pipeline(_ statements: [PipelineStatement]) throws -> [QueryResult] {
        let handle = try requireHandle()
        var encoded: [EncodedParameters] = []
        encoded.reserveCapacity(statements.count)
        for (index, statement) in statements.enumerated() {
            do {
                try statement.sql.checkNoNUL("the SQL text")
                encoded.append(try EncodedParameters(statement.parameters))
            } catch let error as LibPQError {
                throw LibPQError(error.code, "pipeline statement \(index) cannot be sent: \(error.message)")
            }
        }
        return try sendPipeline(handle, statements, encoded)
    }

    /// Sends already encoded statements in pipeline mode and collects their results.
    func sendPipeline(
        _ handle: OpaquePointer, _ statements: [PipelineStatement], _ encoded: [EncodedParameters]
    ) throws -> [QueryResult] {
        if statements.isEmpty { return [] }
        return try pipelined { sender in
            for (statement, parameters) in zip(statements, encoded) { try sender.send(statement.sql, parameters) }
        }.results
    }

    /// A statement that fails on purpose, so that the implicit transaction of a half-sent pipeline aborts.
    private static let abortStatement = PipelineStatement(
        "DO $libpq$ BEGIN RAISE EXCEPTION 'pipeline abandoned by the client after a failed send'; END $libpq$")

    /// Finishes a half-sent pipeline (sync, read the results) so the connection can leave pipeline mode.
    ///
    /// In an implicit transaction the sync would commit what was sent, so a failing statement goes first.
    /// When that or the sync cannot be sent while libpq still reports the connection as fine, the
    /// connection is marked unusable (``isBroken``): its state is unknown, and ``reset()`` recovers it.
    func abandonPipeline(_ handle: OpaquePointer, _ sent: [SentStatement], implicitTransaction: Bool) {
        // A statement prepared in an abandoned pipeline may or may not exist now: never used again.
        for statement in sent { if let key = statement.preparing { statementCache.remove(key) } }
        guard !sent.isEmpty, PQstatus(handle) == CONNECTION_OK else { return }
        var pending = sent
        if implicitTransaction {
            guard PQsendQueryParams(handle, Self.abortStatement.sql, 0, nil, nil, nil, nil, 1) == 1 else {
                unusableReason = "a pipeline could not be abandoned: \(errorMessage(handle))"
                return
            }
            pending.append(SentStatement(sql: Self.abortStatement.sql))
        }
        guard PQpipelineSync(handle) == 1 else {
            unusableReason = "a pipeline could not be synced: \(errorMessage(handle))"
            return
        }
        _ = try? collectPipelineResults(handle, pending)
    }

    func pipelineSendError(_ handle: OpaquePointer, _ what: String) -> LibPQError {
        let error = clientError(handle, "sending \(what) in pipeline mode")
        return error.code == .connectionLost ? error : LibPQError(.pipelineFailed, error.message)
    }

    /// Flushes and reads until the sync's result, attributing each result to its statement.
    ///
    /// The preparations a statement cache sent (``SentStatement/preparing``) answer too; their results are
    /// dropped, and the indices handed to `each` and thrown count the caller's statements only.
    func collectPipelineResults(
        _ handle: OpaquePointer, _ statements: [SentStatement],
        each: ((Int, QueryResult) throws -> Void)? = nil
    ) throws -> [QueryResult] {
        // The caller's statements, and for each sent entry the caller's statement it stands for.
        var ordinals: [Int] = []
        ordinals.reserveCapacity(statements.count)
        var executed = 0
        for statement in statements {
            ordinals.append(executed)
            if statement.isCallers { executed += 1 }
        }
        var results: [QueryResult] = []
        results.reserveCapacity(each == nil ? statements.count : 0)
        var handled = 0
        var failure: (index: Int, sent: Int, error: any Error)?
        var current = 0  // the statement whose result comes next
        var currentAnswered = false
        while true {
            let flush = PQflush(handle)
            guard flush >= 0 else { throw clientError(handle, "flushing the pipeline") }
            var previousWasNull = false
            while PQisBusy(handle) == 0 {
                guard let result = PQgetResult(handle) else {
                    // NULL ends the current statement's results; a second one in a row means "wait".
                    if previousWasNull { break }
                    previousWasNull = true
                    if currentAnswered {
                        current += 1
                        currentAnswered = false
                    }
                    continue
                }
                previousWasNull = false
                let status = PQresultStatus(result)
                if status == PGRES_PIPELINE_SYNC {
                    PQclear(result)
                    if let failure {
                        if let error = failure.error as? DatabaseError {
                            forgetStale(statements, at: failure.sent, error)
                            throw PipelineError(index: failure.index, error: error)
                        }
                        throw failure.error
                    }
                    guard results.count + handled == executed else {
                        throw LibPQError(
                            .pipelineFailed, "got \(results.count + handled) results for \(executed) statements")
                    }
                    return results
                }
                currentAnswered = true
                if current < statements.count, !statements[current].isCallers, status == PGRES_COMMAND_OK {
                    PQclear(result)
                    continue
                }
                switch status {
                case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                    let taken = QueryResult(taking: result)
                    if let each {
                        // Handed over and released at once; a failure is thrown once the pipeline is drained.
                        if failure == nil {
                            do { try each(handled, taken) } catch { failure = (handled, current, error) }
                        }
                        handled += 1
                    } else {
                        results.append(taken)
                    }
                case PGRES_PIPELINE_ABORTED:
                    // A preparation skipped after a failure never happened.
                    if current < statements.count, let key = statements[current].preparing {
                        statementCache.discard(key)
                    }
                    PQclear(result)
                default:
                    if current < statements.count, let key = statements[current].preparing {
                        statementCache.discard(key)
                    }
                    let sql = current < statements.count ? statements[current].sql : nil
                    if failure == nil {
                        let ordinal = current < ordinals.count ? ordinals[current] : executed
                        failure = (ordinal, current, error(from: result, handle: handle, sql: sql))
                    }
                    PQclear(result)
                }
            }
            guard try waitForSocket(handle, writable: flush == 1, timeoutMilliseconds: -1) else { continue }
            guard PQconsumeInput(handle) == 1 else { throw clientError(handle, "reading pipeline results") }
        }
    }
}

/// Sends statements of a pipeline one at a time, each as soon as it is ready (see
/// ``Connection/pipelined(_:each:)``): the server runs one while the caller prepares the next.
package struct PipelineSender {
    let connection: Connection
    let handle: OpaquePointer
    fileprivate let box: SentStatements
    /// Whether each statement is flushed as it is sent, so that the server starts on it while the caller
    /// prepares the next. Not for a pipeline whose `COMMIT` goes with it (a one-row save): its statement,
    /// the `COMMIT` and the sync go in one write, which the server reads at once.
    let flushesEachStatement: Bool

    /// Sends one statement (binary parameters, binary result) and flushes as much as the socket takes now.
    ///
    /// - Throws: ``LibPQError`` `.encoding` (too many parameters, a NUL character), `.pipelineFailed` or
    ///   `.connectionLost`. The pipeline is then abandoned by ``Connection/pipelined(_:each:)``.
    package func send(_ sql: String, _ parameters: [PostgresValue] = []) throws {
        try sql.checkNoNUL("the SQL text")
        try send(sql, try EncodedParameters(parameters))
    }

    /// Sends one statement whose SQL was checked and whose parameters are encoded: by name when the
    /// connection keeps a statement cache (preparing it first, in the same pipeline, when it is new).
    func send(_ sql: String, _ encoded: EncodedParameters) throws {
        guard connection.statementCache.capacity > 0 else {
            let accepted = try encoded.withUnsafePointers { count, types, values, lengths, formats in
                sql.withCString { PQsendQueryParams(handle, $0, count, types, values, lengths, formats, 1) }
            }
            guard accepted == 1 else { throw connection.pipelineSendError(handle, sql) }
            box.statements.append(SentStatement(sql: sql))
            if flushesEachStatement { try connection.flushPipeline(handle) }
            return
        }
        let key = StatementCache.Key(sql: sql, types: encoded.types)
        let name: String
        if let known = connection.statementCache.name(of: key) {
            name = known
        } else {
            name = connection.statementCache.add(key)
            let prepared = key.types.withUnsafeBufferPointer {
                PQsendPrepare(handle, name, sql, encoded.count, $0.baseAddress)
            }
            guard prepared == 1 else {
                connection.statementCache.discard(key)
                throw connection.pipelineSendError(handle, sql)
            }
            connection.statementsPrepared += 1
            box.statements.append(SentStatement(sql: sql, preparing: key))
        }
        // `withCString`: a `String` handed to C directly is copied into a new array.
        let accepted = try encoded.withUnsafePointers { count, _, values, lengths, formats in
            name.withCString { PQsendQueryPrepared(handle, $0, count, values, lengths, formats, 1) }
        }
        guard accepted == 1 else { throw connection.pipelineSendError(handle, sql) }
        box.statements.append(SentStatement(sql: sql, cached: key))
        if flushesEachStatement { try connection.flushPipeline(handle) }
    }

    /// How many statements were sent.
    package var count: Int { box.statements.lazy.filter(\.isCallers).count }

    /// Sends a statement of the connection's own ahead of the caller's (a pending `BEGIN`), without
    /// parameters; its result is not handed to the caller.
    func sendPrelude(_ sql: String) throws {
        // `withCString`: a short text (`BEGIN`, `COMMIT`) is held inside the `String` itself, and passing it
        // to C directly would copy it into a new array on every call.
        guard sql.withCString({ PQsendQueryParams(handle, $0, 0, nil, nil, nil, nil, 1) }) == 1 else {
            throw connection.pipelineSendError(handle, sql)
        }
        box.statements.append(SentStatement(sql: sql, isPrelude: true))
    }
}

/// What a pipeline sent, in order: a caller's statement, or a cache's preparation of the one after it.
struct SentStatement {
    var sql: String
    /// Set for a preparation (``StatementCache``): its result is not the caller's.
    var preparing: StatementCache.Key? = nil
    /// Set for a statement run by its cached name.
    var cached: StatementCache.Key? = nil
    /// Set for a statement of the connection's own sent before the caller's (a transaction's `BEGIN`).
    var isPrelude = false

    /// Whether the result is the caller's: not a preparation's nor a prelude's.
    var isCallers: Bool { preparing == nil && !isPrelude }
}

private final class SentStatements {
    /// Unchecked as ``Connection/statementCache`` is, and for the same reasons: a pipeline's one user appends
    /// and reads it, and nothing inside an access reaches it again (checked, each of a request's seven accesses
    /// paid a run-time check).
    @exclusivity(unchecked) var statements: [SentStatement]

    init() {
        // A request's pipeline: BEGIN, a preparation, the statement, COMMIT; grown once, not three times.
        statements = []
        statements.reserveCapacity(4)
    }
}

extension Connection {
    /// Runs `body` in pipeline mode: every statement it sends through the ``PipelineSender`` goes to the
    /// server at once, without waiting for the one before; after `body` returns, one sync collects a result
    /// per statement, in order (one round trip for all of them).
    ///
    /// Use it inside an explicit transaction (``withTransaction(isolation:readOnly:_:)``): outside one, the
    /// statements form an implicit transaction that the sync commits. With `each`, every result is handed to
    /// it (with the statement's position) as soon as it arrives and then released, instead of being returned:
    /// a long pipeline never holds all its results at once. When `body`, `each` or a statement fails,
    /// the statements sent are abandoned (the sync follows a failing one, so nothing they did survives the
    /// transaction), the connection leaves pipeline mode, and the error is thrown.
    ///
    /// - Throws: What `body` throws; ``PipelineError`` with the failing statement's index and its
    ///   ``DatabaseError``; ``LibPQError`` `.pipelineFailed`, `.connectionLost` or `.connectionClosed`.
    package func pipelined<T>(
        _ body: (PipelineSender) throws -> T, each: ((Int, QueryResult) throws -> Void)? = nil
    ) throws -> (value: T, results: [QueryResult]) {
        let handle = try requireHandle()
        let wasIdle = PQtransactionStatus(handle) == PQTRANS_IDLE
        // Both fail on a connection the server already closed (pgbouncer's FATAL for a server login that keeps
        // failing, seen in a failover): that is a lost connection, which callers retry, not a pipeline error.
        guard PQenterPipelineMode(handle) == 1 else {
            let message = "could not enter pipeline mode: \(errorMessage(handle))"
            throw lostConnection(handle, message) ?? LibPQError(.pipelineFailed, message)
        }
        guard PQsetnonblocking(handle, 1) == 0 else {
            _ = PQexitPipelineMode(handle)
            let message = "could not make the connection non-blocking: \(errorMessage(handle))"
            throw lostConnection(handle, message) ?? LibPQError(.pipelineFailed, message)
        }
        defer {
            _ = PQsetnonblocking(handle, 0)
            _ = PQexitPipelineMode(handle)
        }
        roundTrips += 1
        let commits = pipelinedCommit.isRequested
        let sender = PipelineSender(
            connection: self, handle: handle, box: SentStatements(), flushesEachStatement: !commits)
        let value: T
        do {
            let begin = takePendingBegin()
            // The whole transaction, begun plainly: the sync's implicit transaction (see
            // `commitWithNextStatement(asImplicitTransaction:)`).
            let implicit =
                pipelinedCommit == .requestedImplicitly && begin == Self.plainBegin
                && !singleRowModeMayLinger
            if let begin, !implicit { try sender.sendPrelude(begin) }
            value = try body(sender)
            if commits {
                if !implicit { try sender.sendPrelude("COMMIT") }
                pipelinedCommit = .sent
            }
            guard PQpipelineSync(handle) == 1 else { throw pipelineSendError(handle, "the pipeline sync") }
        } catch {
            abandonPipeline(handle, sender.box.statements, implicitTransaction: wasIdle)
            throw commits && pipelinedCommit == .sent ? Self.commitError(error, connectionBroken: true) : error
        }
        // Past its first command, libpq has left any single-row mode behind.
        if !sender.box.statements.isEmpty { singleRowModeMayLinger = false }
        do {
            let results = try collectPipelineResults(handle, sender.box.statements, each: each)
            if commits { pipelinedCommit = .committed }
            return (value, results)
        } catch {
            guard commits else { throw error }
            // The COMMIT's own failure (a deferred constraint, a serialization failure) or a statement's before
            // it: rolled back, reported as is. A lost connection: the COMMIT may have run.
            if PQtransactionStatus(handle) == PQTRANS_IDLE, !isBroken, (error as? LibPQError) == nil {
                // A caller's check that threw after every result arrived: the COMMIT ran.
                if (error as? PipelineError) == nil { pipelinedCommit = .committed }
                throw error
            }
            throw Self.commitError(error, connectionBroken: isBroken)
        }
    }

    /// Writes what libpq holds for the server, as far as the socket takes it now, without waiting: the rest
    /// goes with the next statement or the sync. Replies that arrived are read into libpq's buffer, so the
    /// server never stalls on a full socket while the caller prepares the next statement.
    fileprivate func flushPipeline(_ handle: OpaquePointer) throws {
        let flush = PQflush(handle)
        guard flush >= 0 else { throw clientError(handle, "flushing the pipeline") }
        if flush == 1, PQconsumeInput(handle) != 1 { throw clientError(handle, "reading pipeline results") }
    }
}
