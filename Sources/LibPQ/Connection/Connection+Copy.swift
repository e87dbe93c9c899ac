import CLibPQ

extension Connection {
    /// The binary COPY signature: `PGCOPY\n\377\r\n\0`, then flags (0) and header extension length (0).
    private static let copyHeader: [UInt8] =
        [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]
        + [0, 0, 0, 0] + [0, 0, 0, 0]
    /// Bytes gathered before each `PQputCopyData` call.
    private static let copyChunkSize = 256 * 1024

    /// Streams rows into a table with `COPY ... FROM STDIN (FORMAT binary)` and returns the rows copied.
    ///
    /// Each row's values must match the column list of `copySQL` in order and type (the server checks the
    /// binary representation against the column type, so `Int64` values go to `bigint` columns).
    /// ```swift
    /// try connection.copyInBinary(#"COPY "point" ("x", "y") FROM STDIN (FORMAT binary)"#, rows: rows)
    /// ```
    /// - Throws: ``DatabaseError`` when the server rejects the COPY or a row (nothing is copied then);
    ///   ``LibPQError`` `.copyFailed` when the statement is not a COPY FROM STDIN or a row is malformed,
    ///   `.encoding` when the SQL text contains a NUL character, `.connectionLost`, `.connectionClosed`.
    @discardableResult
    package func copyInBinary(_ copySQL: String, rows: some Sequence<[PostgresValue]>) throws -> Int {
        try copyInBinary(copySQL, rows: rows, pieceSize: 1 << 30)
    }

    /// ``copyInBinary(_:rows:)`` handing libpq at most `pieceSize` bytes per `PQputCopyData` call (its length
    /// is an `Int32`, and a chunk holding a value close to 2 GiB can exceed that); tests pass small sizes.
    func copyInBinary(_ copySQL: String, rows: some Sequence<[PostgresValue]>, pieceSize: Int) throws -> Int {
        try withCopyInBinary(copySQL, pieceSize: pieceSize) { writer in try sendCopyRows(writer, rows) }
    }

    /// Runs `copySQL` (a `COPY ... FROM STDIN (FORMAT binary)`) and hands `body` a writer for its tuples:
    /// the binary header goes first and the trailer last, so `body` writes only tuples (each a big-endian
    /// `Int16` field count, then per field a big-endian `Int32` length and the value's bytes, or `-1` for
    /// NULL), in as many ``CopyInWriter/write(_:)`` calls as it likes, while the server reads what came
    /// before. Returns the rows copied.
    ///
    /// Use the writer only inside `body`. When `body` throws, the COPY is aborted (the server rolls it back,
    /// and in a transaction the transaction fails) and the error is thrown.
    /// - Throws: What `body` throws; ``DatabaseError`` when the server rejects the COPY or a tuple;
    ///   ``LibPQError`` `.copyFailed` when the statement is not a COPY FROM STDIN, `.encoding` when the SQL text
    ///   contains a NUL character, `.connectionLost`, `.connectionClosed`.
    @discardableResult
    package func withCopyInBinary(_ copySQL: String, _ body: (CopyInWriter) throws -> Void) throws -> Int {
        try withCopyInBinary(copySQL, pieceSize: 1 << 30, body)
    }

    func withCopyInBinary(_ copySQL: String, pieceSize: Int, _ body: (CopyInWriter) throws -> Void) throws -> Int {
        let handle = try requireHandle()
        try copySQL.checkNoNUL("the COPY statement")
        try sendPendingBegin()
        roundTrips += 1
        guard let start = PQexec(handle, copySQL) else { throw clientError(handle, "starting COPY") }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            if PQresultStatus(start) == PGRES_COPY_OUT || PQresultStatus(start) == PGRES_COPY_BOTH {
                PQclear(start)
                abandonCopy(handle)
                throw LibPQError(.copyFailed, "a COPY FROM STDIN was expected, got another COPY")
            }
            _ = try check(start, handle: handle, sql: copySQL)
            throw LibPQError(.copyFailed, "the statement did not start a COPY FROM STDIN: \(copySQL)")
        }
        PQclear(start)
        let writer = CopyInWriter(connection: self, handle: handle, pieceSize: pieceSize)
        do {
            try writer.write(Self.copyHeader)
            try body(writer)
            try writer.write(Self.copyTrailer)
        } catch {
            // Abort the COPY so the server rolls it back, then leave the connection idle.
            _ = PQputCopyEnd(handle, "aborted by the client: \(error)")
            while let result = PQgetResult(handle) { PQclear(result) }
            throw error
        }
        guard PQputCopyEnd(handle, nil) == 1 else { throw clientError(handle, "ending COPY") }
        var copied = 0
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                copied = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
                PQclear(result)
            } else {
                if failure == nil { failure = error(from: result, handle: handle, sql: copySQL) }
                PQclear(result)
            }
        }
        if let failure { throw failure }
        return copied
    }

    /// The binary COPY trailer: a field count of -1.
    private static let copyTrailer: [UInt8] = [0xFF, 0xFF]

    /// Writes each row as a tuple, in chunks.
    private func sendCopyRows(_ writer: CopyInWriter, _ rows: some Sequence<[PostgresValue]>) throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.copyChunkSize + 64 * 1024)
        var rowNumber = 0
        for row in rows {
            guard let fieldCount = Int16(exactly: row.count) else {
                throw LibPQError(.copyFailed, "row \(rowNumber) has \(row.count) values; COPY allows 32,767")
            }
            buffer.appendBigEndian(fieldCount)
            for value in row {
                if let count = value.byteCount {
                    guard let length = Int32(exactly: count) else {
                        throw LibPQError(.copyFailed, "a value in row \(rowNumber) is larger than 2 GiB")
                    }
                    buffer.appendBigEndian(length)
                    value.withBytes { buffer.append(contentsOf: $0) }
                } else {
                    buffer.appendBigEndian(Int32(-1))
                }
            }
            rowNumber += 1
            if buffer.count >= Self.copyChunkSize {
                try writer.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty { try writer.write(buffer) }
    }

    /// Sends `bytes` in pieces of at most `pieceSize` bytes (and never more than `Int32.max`).
    fileprivate func putCopyData(_ handle: OpaquePointer, _ bytes: [UInt8], pieceSize: Int) throws {
        let piece = max(1, min(pieceSize, Int(Int32.max)))
        try bytes.withUnsafeBytes { raw in
            var start = 0
            repeat {
                let end = start + min(piece, raw.count - start)
                let slice = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                let sent = PQputCopyData(
                    handle, slice.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(clamping: slice.count))
                guard sent == 1 else { throw clientError(handle, "sending COPY data") }
                start = end
            } while start < raw.count
        }
    }
}

/// Writes the tuples of a binary `COPY ... FROM STDIN` (see ``Connection/withCopyInBinary(_:_:)``).
package struct CopyInWriter {
    let connection: Connection
    let handle: OpaquePointer
    let pieceSize: Int

    /// Hands `bytes` (whole tuples, or parts of them: the server reads a stream) to libpq, which sends them
    /// as the socket takes them; waits only while the socket is full.
    ///
    /// - Throws: ``LibPQError`` `.connectionLost` and the like when the bytes cannot be sent.
    package func write(_ bytes: [UInt8]) throws {
        try connection.putCopyData(handle, bytes, pieceSize: pieceSize)
    }
}
