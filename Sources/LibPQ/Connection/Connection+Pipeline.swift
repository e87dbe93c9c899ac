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
    /// - Throws: ``PipelineError`` with the failing statement's index and its ``DatabaseError`` (the
    ///   statements after it were skipped by the server); ``LibPQError`` `.pipelineFailed`,
    ///   `.connectionLost` or `.connectionClosed`.
    public func pipeline(_ statements: [PipelineStatement]) throws -> [QueryResult] {
        let handle = try requireHandle()
        if statements.isEmpty { return [] }
        guard PQenterPipelineMode(handle) == 1 else {
            throw LibPQError(.pipelineFailed, "could not enter pipeline mode: \(errorMessage(handle))")
        }
        guard PQsetnonblocking(handle, 1) == 0 else {
            _ = PQexitPipelineMode(handle)
            throw LibPQError(.pipelineFailed, "could not make the connection non-blocking: \(errorMessage(handle))")
        }
        defer {
            _ = PQsetnonblocking(handle, 0)
            _ = PQexitPipelineMode(handle)
        }
        for statement in statements {
            let sent = try withParameters(statement.parameters) { count, types, values, lengths, formats in
                PQsendQueryParams(handle, statement.sql, count, types, values, lengths, formats, 1)
            }
            guard sent == 1 else { throw pipelineSendError(handle, statement.sql) }
        }
        guard PQpipelineSync(handle) == 1 else { throw pipelineSendError(handle, "the pipeline sync") }
        return try collectPipelineResults(handle, statements)
    }

    private func pipelineSendError(_ handle: OpaquePointer, _ what: String) -> LibPQError {
        let error = clientError(handle, "sending \(what) in pipeline mode")
        return error.code == .connectionLost ? error : LibPQError(.pipelineFailed, error.message)
    }

    /// Flushes and reads until the sync's result, attributing each result to its statement.
    private func collectPipelineResults(
        _ handle: OpaquePointer, _ statements: [PipelineStatement]
    ) throws -> [QueryResult] {
        var results: [QueryResult] = []
        results.reserveCapacity(statements.count)
        var failure: (index: Int, error: any Error)?
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
                            throw PipelineError(index: failure.index, error: error)
                        }
                        throw failure.error
                    }
                    guard results.count == statements.count else {
                        throw LibPQError(
                            .pipelineFailed, "got \(results.count) results for \(statements.count) statements")
                    }
                    return results
                }
                currentAnswered = true
                switch status {
                case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                    results.append(QueryResult(taking: result))
                case PGRES_PIPELINE_ABORTED:
                    PQclear(result)
                default:
                    let sql = current < statements.count ? statements[current].sql : nil
                    if failure == nil { failure = (current, error(from: result, handle: handle, sql: sql)) }
                    PQclear(result)
                }
            }
            guard try waitForSocket(handle, writable: flush == 1, timeoutMilliseconds: -1) else { continue }
            guard PQconsumeInput(handle) == 1 else { throw clientError(handle, "reading pipeline results") }
        }
    }
}
