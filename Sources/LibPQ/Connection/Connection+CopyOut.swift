import CLibPQ

/// The fields of one row of a binary `COPY ... TO STDOUT`, read in column order with ``nextField()``.
///
/// A row is only valid inside the `body` of ``Connection/copyOutBinary(_:_:)`` that hands it out: its
/// bytes are libpq's buffer for that row, freed when `body` returns.
///
/// ``nextField()`` is inlinable: a caller in another module reads each field without a call.
package struct CopyRow {
    /// The next byte to read, and the end of the row's message.
    @usableFromInline var cursor: UnsafeRawPointer
    @usableFromInline let end: UnsafeRawPointer
    /// The number of fields the row holds.
    package let fieldCount: Int
    /// The number of fields read so far.
    package var fieldsRead: Int { read }
    @usableFromInline var read = 0

    init(start: UnsafeRawPointer, end: UnsafeRawPointer, fieldCount: Int) {
        self.cursor = start
        self.end = end
        self.fieldCount = fieldCount
    }

    /// The next field's bytes, or `nil` for SQL `NULL`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` when every field was read or the row's bytes end early (a
    ///   length that does not fit the row).
    @inlinable
    package mutating func nextField() throws -> UnsafeRawBufferPointer? {
        guard read < fieldCount, end - cursor >= 4 else { throw pastTheEnd() }
        let length = Int(Int32(bigEndian: cursor.loadUnaligned(as: Int32.self)))
        cursor += 4
        read += 1
        guard length >= 0 else {
            if length == -1 { return nil }
            throw pastTheEnd()
        }
        guard end - cursor >= length else { throw pastTheEnd() }
        let field = UnsafeRawBufferPointer(start: cursor, count: length)
        cursor += length
        return field
    }

    @usableFromInline
    func pastTheEnd() -> LibPQError {
        LibPQError(.decoding, "a COPY row of \(fieldCount) fields has no complete field after the first \(read)")
    }
}

extension Connection {
    /// Runs `COPY (...) TO STDOUT (FORMAT binary)` and hands each row to `body` as it arrives; returns the
    /// number of rows.
    ///
    /// The rows are libpq's copy buffers, one per row, with no result object per row: what single-row
    /// mode (``queryRows(_:_:_:)``) costs per row in libpq is about three times this. COPY takes no
    /// parameters, so `copySQL` holds its values as literals. Binary COPY carries no column types: the
    /// caller knows them from its statement (casting each column to the type it decodes).
    ///
    /// When the server fails the COPY after some rows (a statement timeout, say), or `body` throws, the
    /// remaining rows are read and dropped, so the connection is idle again, and the error is thrown: the
    /// rows handed to `body` were not all of them.
    ///
    /// - Throws: ``DatabaseError`` when the server rejects the statement or fails during the COPY;
    ///   ``LibPQError`` `.copyFailed` when the statement does not start a COPY TO STDOUT, `.decoding` for a
    ///   malformed row, `.encoding` for SQL text holding a NUL character, `.connectionLost`,
    ///   `.connectionClosed`; what `body` throws.
    @discardableResult
    package func copyOutBinary(_ copySQL: String, _ body: (inout CopyRow) throws -> Void) throws -> Int {
        let handle = try requireHandle()
        try copySQL.checkNoNUL("the COPY statement")
        try sendPendingBegin()
        roundTrips += 1
        guard PQsendQuery(handle, copySQL) == 1 else { throw clientError(handle, "sending COPY") }
        guard let start = PQgetResult(handle) else { throw clientError(handle, "starting COPY") }
        guard PQresultStatus(start) == PGRES_COPY_OUT else { try refuseNonCopyOut(start, handle, copySQL) }
        PQclear(start)
        var reader = CopyOutReader()
        var failure: (any Error)? = nil
        var lost: LibPQError? = nil
        while true {
            var buffer: UnsafeMutablePointer<CChar>? = nil
            let length = PQgetCopyData(handle, &buffer, 0)
            guard length >= 0 else {
                // -1: the COPY is over (its outcome is the next result); -2: libpq failed.
                if length != -1 { lost = clientError(handle, "reading COPY data") }
                break
            }
            guard let buffer else { continue }
            defer { PQfreemem(buffer) }
            guard failure == nil else { continue }
            do {
                try reader.read(UnsafeRawBufferPointer(start: buffer, count: Int(length)), body)
            } catch {
                failure = error
            }
        }
        var finished = false
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                finished = true
            } else if failure == nil {
                failure = error(from: result, handle: handle, sql: copySQL)
            }
            PQclear(result)
        }
        if let failure { throw failure }
        if let lost { throw lost }
        guard finished, reader.sawTrailer else { throw clientError(handle, "COPY") }
        return reader.rows
    }

    /// The error for a statement that did not start a COPY TO STDOUT, leaving the connection idle.
    private func refuseNonCopyOut(_ start: OpaquePointer, _ handle: OpaquePointer, _ sql: String) throws -> Never {
        switch PQresultStatus(start) {
        case PGRES_COPY_IN, PGRES_COPY_BOTH:
            PQclear(start)
            abandonCopy(handle)
        default:
            // A server error is thrown as it is; any other statement's result is dropped.
            defer { while let next = PQgetResult(handle) { PQclear(next) } }
            _ = try check(start, handle: handle, sql: sql)
        }
        throw LibPQError(.copyFailed, "copyOutBinary needs COPY ... TO STDOUT (FORMAT binary)")
    }
}

/// Splits the messages of a binary COPY TO STDOUT: the header (in front of the first row), one row per
/// message, the trailer.
private struct CopyOutReader {
    /// `PGCOPY\n\377\r\n\0`.
    private static let signature: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]
    private var sawHeader = false
    private(set) var sawTrailer = false
    private(set) var rows = 0

    mutating func read(_ message: UnsafeRawBufferPointer, _ body: (inout CopyRow) throws -> Void) throws {
        var offset = 0
        if !sawHeader {
            offset = try Self.headerLength(message)
            sawHeader = true
        }
        guard offset < message.count else { return }
        guard !sawTrailer, message.count - offset >= 2 else {
            throw LibPQError(.decoding, "COPY data after its end, or a row without a field count")
        }
        let count = Int(
            Int16(bitPattern: UInt16(bigEndian: message.loadUnaligned(fromByteOffset: offset, as: UInt16.self))))
        if count == -1 {
            sawTrailer = true
            return
        }
        guard count >= 0 else { throw LibPQError(.decoding, "a COPY row with \(count) fields") }
        guard let base = message.baseAddress else { return }
        var row = CopyRow(start: base + offset + 2, end: base + message.count, fieldCount: count)
        try body(&row)
        rows += 1
    }

    /// The length of the binary header at the start of `message`: signature, flags, extension.
    private static func headerLength(_ message: UnsafeRawBufferPointer) throws -> Int {
        let fixed = signature.count + 8
        guard message.count >= fixed, message.prefix(signature.count).elementsEqual(signature) else {
            throw LibPQError(.decoding, "the COPY data does not start with the binary COPY signature")
        }
        let flags = UInt32(bigEndian: message.loadUnaligned(fromByteOffset: signature.count, as: UInt32.self))
        // Bit 16: each row carries an OID first, which nothing asked for.
        guard flags & (1 << 16) == 0 else { throw LibPQError(.decoding, "binary COPY rows with OIDs") }
        let extensionLength = Int(
            UInt32(bigEndian: message.loadUnaligned(fromByteOffset: signature.count + 4, as: UInt32.self)))
        guard extensionLength <= message.count - fixed else {
            throw LibPQError(.decoding, "the binary COPY header's extension is longer than its message")
        }
        return fixed + extensionLength
    }
}
