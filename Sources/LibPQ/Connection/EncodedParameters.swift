import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// A statement's parameters, checked for libpq, laid out when sent: one contiguous byte buffer, value
/// pointers, lengths, binary formats, OIDs.
///
/// Building one checks everything libpq would otherwise reject half way through a send (the parameter
/// count, each value's size), so a pipeline can encode every statement before it sends the first. The
/// layout itself is made in scratch memory for the duration of the call (``withUnsafePointers(_:)``):
/// a request's statement is sent once, and five heap arrays per statement were a tenth of its allocations.
struct EncodedParameters {
    /// The most parameters one statement may bind (the protocol's count is 16 bits).
    static let maximumCount = 65_535

    let count: Int32
    private let parameters: [PostgresValue]
    /// The values' bytes in all.
    private let totalBytes: Int
    /// The parameters' type OIDs (0: inferred by the server).
    let types: [Oid]

    /// Checks `parameters`.
    ///
    /// - Parameter limit: the most parameters accepted; only tests raise it, to reach libpq's own check.
    /// - Throws: ``LibPQError`` `.encoding` for more than 65,535 parameters or a value of 2 GiB or more.
    init(_ parameters: [PostgresValue], limit: Int = maximumCount) throws {
        guard parameters.count <= limit, let count = Int32(exactly: parameters.count) else {
            throw LibPQError(
                .encoding, "\(parameters.count) parameters; PostgreSQL allows 65,535 (bind an array instead)")
        }
        var total = 0
        for (index, parameter) in parameters.enumerated() {
            let size = parameter.byteCount ?? 0
            guard Int32(exactly: size) != nil else {
                throw LibPQError(.encoding, "parameter $\(index + 1) has \(size) bytes; the limit is 2 GiB")
            }
            total = total.addingReportingOverflow(size).partialValue
        }
        self.count = count
        self.parameters = parameters
        self.totalBytes = total
        self.types = parameters.map { Oid($0.type.rawValue) }
    }

    /// Calls `body` with the count, OIDs, value pointers, lengths and formats, valid only inside `body`.
    func withUnsafePointers<R>(
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        let n = parameters.count
        // One byte more than the values need: never empty, so an empty non-NULL value gets a pointer.
        return try withUnsafeTemporaryAllocation(of: CChar.self, capacity: totalBytes + 1) { storage in
            try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(1, n)) { values in
                try withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(1, 2 * n)) { numbers in
                    guard let base = storage.baseAddress, let lengths = numbers.baseAddress else {
                        throw LibPQError(.encoding, "could not lay out the parameters")
                    }
                    let formats = lengths + n
                    var offset = 0
                    for (index, parameter) in parameters.enumerated() {
                        formats[index] = 1
                        let copied = parameter.withBytes { raw in
                            if let source = raw.baseAddress {
                                (base + offset).update(
                                    from: source.assumingMemoryBound(to: CChar.self), count: raw.count)
                            }
                            return raw.count
                        }
                        guard let copied else {
                            values[index] = nil
                            lengths[index] = 0
                            continue
                        }
                        values[index] = UnsafePointer(base + offset)
                        lengths[index] = Int32(truncatingIfNeeded: copied)
                        offset += copied
                    }
                    return try types.withUnsafeBufferPointer { oids in
                        try body(count, oids.baseAddress, UnsafePointer(values.baseAddress), lengths, formats)
                    }
                }
            }
        }
    }
}

extension String {
    /// Throws when the text holds a NUL byte: libpq takes C strings, so it would silently cut the text there.
    ///
    /// - Parameter what: names the text in the error, e.g. "the SQL text".
    /// - Throws: ``LibPQError`` `.encoding`.
    func checkNoNUL(_ what: @autoclosure () -> String) throws {
        // A native string's bytes are searched with `memchr`, not by walking the UTF-8 view a byte at a time:
        // a COPY's text by 10,000 keys is 60 KB.
        let found: Int?? = utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) else { return nil }
            return UnsafeRawPointer(nul) - UnsafeRawPointer(base)
        }
        let offset: Int
        switch found {
        case .some(nil): return
        case .some(let position?): offset = position
        case nil:
            guard let nul = utf8.firstIndex(of: 0) else { return }
            offset = utf8.distance(from: utf8.startIndex, to: nul)
        }
        throw LibPQError(
            .encoding,
            "\(what()) contains a NUL character (U+0000) at byte \(offset); libpq would cut the text there")
    }
}
