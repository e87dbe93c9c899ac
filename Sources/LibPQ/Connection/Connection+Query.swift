import CLibPQ

extension Connection {
    /// Runs one statement with binary parameters and returns its binary result (`PQexecParams`).
    ///
    /// - Throws: ``DatabaseError`` (carrying `sql`) when the server rejects the statement; ``LibPQError``
    ///   `.connectionClosed`, `.connectionLost` or `.encoding` (more than 65,535 parameters).
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> QueryResult {
        let handle = try requireHandle()
        let result = try withParameters(parameters) { count, types, values, lengths, formats in
            PQexecParams(handle, sql, count, types, values, lengths, formats, 1)
        }
        return try check(result, handle: handle, sql: sql)
    }

    /// Runs one or more statements separated by `;` with the simple protocol (`PQexec`), no parameters.
    ///
    /// - Throws: ``DatabaseError`` for the first failing statement; ``LibPQError`` when closed or lost.
    public func execute(_ sql: String) throws {
        let handle = try requireHandle()
        _ = try check(PQexec(handle, sql), handle: handle, sql: sql)
    }

    /// Prepares a named statement on this session (`PQprepare`).
    ///
    /// `types` may fix parameter types; missing or `.unspecified` ones are inferred by the server.
    /// - Throws: ``DatabaseError`` when the SQL is invalid (e.g. ``SQLState/duplicateObject`` for a name in
    ///   use); ``LibPQError`` when closed or lost.
    public func prepare(_ name: String, _ sql: String, types: [PostgresType] = []) throws {
        let handle = try requireHandle()
        let oids = types.map(\.rawValue)
        let result = oids.withUnsafeBufferPointer { PQprepare(handle, name, sql, Int32(oids.count), $0.baseAddress) }
        _ = try check(result, handle: handle, sql: sql)
        preparedStatements[name] = sql
    }

    /// Runs a statement prepared with ``prepare(_:_:types:)`` (`PQexecPrepared`), binary in and out.
    ///
    /// - Throws: ``DatabaseError`` (carrying the prepared SQL) or ``LibPQError``.
    @discardableResult
    public func queryPrepared(_ name: String, _ parameters: [PostgresValue] = []) throws -> QueryResult {
        let handle = try requireHandle()
        let result = try withParameters(parameters) { count, _, values, lengths, formats in
            PQexecPrepared(handle, name, count, values, lengths, formats, 1)
        }
        return try check(result, handle: handle, sql: preparedStatements[name] ?? "prepared statement \(name)")
    }

    /// Quotes an identifier for SQL text: `my "table"` becomes `"my ""table"""`.
    public static func quoteIdentifier(_ identifier: String) -> String {
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
    func error(from result: OpaquePointer, handle: OpaquePointer, sql: String?) -> any Error {
        if PQstatus(handle) == CONNECTION_BAD {
            let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
            return LibPQError(.connectionLost, "connection lost: \(message.isEmpty ? errorMessage(handle) : message)")
        }
        if let error = DatabaseError(result: result, sql: sql) { return error }
        let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
        return LibPQError(.protocolViolation, message.isEmpty ? errorMessage(handle) : message)
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

    /// Lays the parameters out for libpq: one contiguous byte buffer, binary formats, type OIDs.
    func withParameters<R>(
        _ parameters: [PostgresValue],
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        guard parameters.count <= 65_535 else {
            throw LibPQError(.encoding, "\(parameters.count) parameters; PostgreSQL allows 65,535 (use an array)")
        }
        var storage: [UInt8] = []
        storage.reserveCapacity(parameters.reduce(1) { $0 + ($1.bytes?.count ?? 0) })
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        offsets.reserveCapacity(parameters.count)
        lengths.reserveCapacity(parameters.count)
        for parameter in parameters {
            if let bytes = parameter.bytes {
                guard let length = Int32(exactly: bytes.count) else {
                    throw LibPQError(.encoding, "a parameter of \(bytes.count) bytes is too large")
                }
                offsets.append(storage.count)
                lengths.append(length)
                storage.append(contentsOf: bytes)
            } else {
                offsets.append(nil)
                lengths.append(0)
            }
        }
        storage.append(0)  // never empty, so an empty non-NULL value still gets a non-nil pointer
        let types = parameters.map { Oid($0.type.rawValue) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        return try storage.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else {
                throw LibPQError(.encoding, "could not lay out the parameters")
            }
            let chars = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { chars + $0 } }
            return try body(Int32(parameters.count), types, values, lengths, formats)
        }
    }
}
