import CLibPQ

extension Connection {
    /// Runs one statement with binary parameters and returns its binary result (`PQexecParams`).
    ///
    /// - Throws: ``DatabaseError`` (carrying `sql`) when the server rejects the statement; ``LibPQError``
    ///   `.connectionClosed`, `.connectionLost` or `.encoding` (more than 65,535 parameters, or SQL text
    ///   containing a NUL character).
    @discardableResult
    package func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> QueryResult {
        let handle = try requireHandle()
        try sql.checkNoNUL("the SQL text")
        let encoded = try EncodedParameters(parameters)
        if pendingBegin != nil || pipelinedCommit.isRequested {
            // The transaction's BEGIN, or its COMMIT, and this statement in one pipeline: one round trip.
            do {
                return try pipelined { sender in try sender.send(sql, encoded) }.results[0]
            } catch let error as PipelineError {
                throw error.error
            }
        }
        singleRowModeMayLinger = false
        return try withStatement(handle, sql, encoded) { name in
            roundTrips += 1
            let result = try encoded.withUnsafePointers { count, types, values, lengths, formats in
                // `withCString` on the text passed: a `String` handed to C directly is copied into a new array.
                if let name {
                    return name.withCString { PQexecPrepared(handle, $0, count, values, lengths, formats, 1) }
                }
                return sql.withCString { PQexecParams(handle, $0, count, types, values, lengths, formats, 1) }
            }
            return try check(result, handle: handle, sql: sql)
        }
    }

    /// Runs one statement with binary parameters and hands its rows to `body` as they arrive (libpq's
    /// single-row mode); returns the number of rows.
    ///
    /// Each ``QueryResult`` given to `body` holds the next row (or, where libpq could not switch to
    /// single-row mode, all of them) and no command tag; a statement without rows calls `body` never.
    /// Neither libpq nor this call holds the whole result at once, and `body` works on the first rows while
    /// the server still sends the last ones. When the server fails the statement after some rows (a
    /// statement timeout, say), or `body` throws, the statement's remaining results are read and dropped, so
    /// the connection is idle again, and the error is thrown: the rows handed to `body` were not all of them.
    ///
    /// - Throws: What ``query(_:_:)`` throws; what `body` throws.
    @discardableResult
    package func queryRows(_ sql: String, _ parameters: [PostgresValue] = [], _ body: (QueryResult) throws -> Void)
        throws -> Int
    {
        let handle = try requireHandle()
        try sql.checkNoNUL("the SQL text")
        let encoded = try EncodedParameters(parameters)
        try sendPendingBegin()
        return try withStatement(handle, sql, encoded) { name in
            roundTrips += 1
            let sent = try encoded.withUnsafePointers { count, types, values, lengths, formats in
                if let name {
                    return name.withCString { PQsendQueryPrepared(handle, $0, count, values, lengths, formats, 1) }
                }
                return sql.withCString { PQsendQueryParams(handle, $0, count, types, values, lengths, formats, 1) }
            }
            guard sent == 1 else { throw clientError(handle, "sending a query") }
            return try receiveRows(handle, sql, body)
        }
    }

    /// Reads the rows of the statement just sent in single-row mode (see ``queryRows(_:_:_:)``).
    private func receiveRows(_ handle: OpaquePointer, _ sql: String, _ body: (QueryResult) throws -> Void) throws
        -> Int
    {
        // Asked right after sending; if libpq refuses, the rows come as one result.
        _ = PQsetSingleRowMode(handle)
        singleRowModeMayLinger = true
        // The statement's first row, whose columns every later row shares.
        var first: QueryResult? = nil
        var failure: (any Error)? = nil
        var rows = 0
        var ended = false
        while let next = PQgetResult(handle) {
            ended = true
            guard failure == nil else {
                PQclear(next)
                continue
            }
            do {
                let result: QueryResult
                if PQresultStatus(next) == PGRES_SINGLE_TUPLE, let first {
                    result = QueryResult(takingRow: next, columnTypes: first.columnTypes)
                } else {
                    result = try check(next, handle: handle, sql: sql)
                    if first == nil, result.rowCount > 0 { first = result }
                }
                guard result.rowCount > 0 else { continue }
                rows += result.rowCount
                try body(result)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        // Not even a final result: the connection failed on the way.
        guard ended else { throw clientError(handle, "a query") }
        return rows
    }

    /// Runs one or more statements separated by `;` with the simple protocol (`PQexec`), no parameters.
    ///
    /// - Throws: ``DatabaseError`` for the first failing statement; ``LibPQError`` when closed or lost, or
    ///   `.encoding` when the SQL text contains a NUL character.
    package func execute(_ sql: String) throws {
        let handle = try requireHandle()
        try sql.checkNoNUL("the SQL text")
        roundTrips += 1
        singleRowModeMayLinger = false
        // A pending BEGIN goes in the same text: one round trip.
        let text = takePendingBegin().map { $0 + "; " + sql } ?? sql
        _ = try check(PQexec(handle, text), handle: handle, sql: sql)
    }

    /// Prepares a named statement on this session (`PQprepare`).
    ///
    /// `types` may fix parameter types; missing or `.unspecified` ones are inferred by the server.
    /// - Throws: ``DatabaseError`` when the SQL is invalid (e.g. ``SQLState/duplicateObject`` for a name in
    ///   use); ``LibPQError`` when closed or lost, or `.encoding` when the name or the SQL text contains a
    ///   NUL character or more than 65,535 types are given.
    package func prepare(_ name: String, _ sql: String, types: [PostgresType] = []) throws {
        let handle = try requireHandle()
        try name.checkNoNUL("the prepared statement name")
        try sql.checkNoNUL("the SQL text")
        guard types.count <= EncodedParameters.maximumCount, let typeCount = Int32(exactly: types.count) else {
            throw LibPQError(.encoding, "\(types.count) parameter types; PostgreSQL allows 65,535")
        }
        let oids = types.map(\.rawValue)
        try sendPendingBegin()
        roundTrips += 1
        let result = oids.withUnsafeBufferPointer { PQprepare(handle, name, sql, typeCount, $0.baseAddress) }
        _ = try check(result, handle: handle, sql: sql)
        preparedStatements[name] = sql
    }

    /// Runs a statement prepared with ``prepare(_:_:types:)`` (`PQexecPrepared`), binary in and out.
    ///
    /// - Throws: ``DatabaseError`` (carrying the prepared SQL) or ``LibPQError``.
    @discardableResult
    package func queryPrepared(_ name: String, _ parameters: [PostgresValue] = []) throws -> QueryResult {
        let handle = try requireHandle()
        try name.checkNoNUL("the prepared statement name")
        try sendPendingBegin()
        roundTrips += 1
        let result = try withParameters(parameters) { count, _, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 1)
        }
        return try check(result, handle: handle, sql: preparedStatements[name] ?? "prepared statement \(name)")
    }

    /// Quotes an identifier for SQL text: `my "table"` becomes `"my ""table"""`.
    ///
    /// An identifier containing a NUL character stays in the text, and running that text throws
    /// ``LibPQError`` `.encoding` (PostgreSQL identifiers cannot hold NUL).
    package static func quoteIdentifier(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: - Internals

    /// Turns a finished `PGresult` into a ``QueryResult`` or the matching error (and frees it on error).
    func check(_ result: OpaquePointer?, handle: OpaquePointer, sql: String?) throws -> QueryResult {
        guard let result else { throw clientError(handle, "a query") }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return QueryResult(taking: result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            PQclear(result)
            abandonCopy(handle)
            throw LibPQError(.protocolViolation, "COPY is not supported by query()/execute(); use copyInBinary")
        default:
            defer { PQclear(result) }
            throw error(from: result, handle: handle, sql: sql)
        }
    }

    /// The error a failed result stands for: a lost connection, a server error, or a client-side failure.
    ///
    /// A result without a SQLSTATE is libpq's own. When the server went away while a statement was being
    /// written, libpq reports "server closed the connection unexpectedly" that way while `PQstatus` may still
    /// say `CONNECTION_OK` (seen after a server's last message was a notice), so the connection's real state
    /// decides: one it can no longer use is `.connectionLost`, which callers retry like any lost connection.
    func error(from result: OpaquePointer, handle: OpaquePointer, sql: String?) -> any Error {
        let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
        if PQstatus(handle) == CONNECTION_BAD {
            return LibPQError(.connectionLost, "connection lost: \(message.isEmpty ? errorMessage(handle) : message)")
        }
        if let error = DatabaseError(result: result, sql: sql) { return error }
        if let lost = lostConnection(handle, message.isEmpty ? errorMessage(handle) : message) { return lost }
        return LibPQError(.protocolViolation, message.isEmpty ? errorMessage(handle) : message)
    }

    /// `.connectionLost` when libpq can no longer use the connection although `PQstatus` still says
    /// `CONNECTION_OK`: its socket is gone, or reading what waits on it fails or ends the session. Marks the
    /// connection unusable then (``isBroken``). `nil` for a connection that still works.
    func lostConnection(_ handle: OpaquePointer, _ message: String) -> LibPQError? {
        let gone =
            PQstatus(handle) == CONNECTION_BAD || PQsocket(handle) < 0 || PQconsumeInput(handle) == 0
            || PQstatus(handle) == CONNECTION_BAD || unusableReason != nil
        guard gone else { return nil }
        if unusableReason == nil { unusableReason = "the connection was lost: \(message)" }
        return LibPQError(.connectionLost, "connection lost: \(message)")
    }

    /// Ends a COPY this connection did not ask for and drains its results, leaving the connection idle.
    func abandonCopy(_ handle: OpaquePointer) {
        _ = PQputCopyEnd(handle, "COPY is not supported here")
        var buffer: UnsafeMutablePointer<CChar>?
        while PQgetCopyData(handle, &buffer, 0) > 0 {
            if let data = buffer { PQfreemem(data) }
        }
        while let next = PQgetResult(handle) { PQclear(next) }
    }

    /// Lays the parameters out for libpq (see ``EncodedParameters``) and calls `body` with the pointers.
    func withParameters<R>(
        _ parameters: [PostgresValue],
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        try EncodedParameters(parameters).withUnsafePointers(body)
    }
}
