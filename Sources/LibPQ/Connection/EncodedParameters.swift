import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// A statement's parameters laid out for libpq: one contiguous byte buffer, lengths, binary formats, OIDs.
///
/// Building one checks everything libpq would otherwise reject half way through a send (the parameter
/// count, each value's size), so a pipeline can encode every statement before it sends the first.
struct EncodedParameters {
    /// The most parameters one statement may bind (the protocol's count is 16 bits).
    static let maximumCount = 65_535

    let count: Int32
    private let storage: [UInt8]
    private let offsets: [Int?]
    private let lengths: [Int32]
    /// The parameters' type OIDs (0: inferred by the server).
    let types: [Oid]
    private let formats: [Int32]

    /// Encodes `parameters`.
    ///
    /// - Parameter limit: the most parameters accepted; only tests raise it, to reach libpq's own check.
    /// - Throws: ``LibPQError`` `.encoding` for more than 65,535 parameters or a value of 2 GiB or more.
    init(_ parameters: [PostgresValue], limit: Int = maximumCount) throws {
        guard parameters.count <= limit, let count = Int32(exactly: parameters.count) else {
            throw LibPQError(
                .encoding, "\(parameters.count) parameters; PostgreSQL allows 65,535 (bind an array instead)")
        }
        var storage: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        offsets.reserveCapacity(parameters.count)
        lengths.reserveCapacity(parameters.count)
        var total = 1
        for parameter in parameters {
            total = total.addingReportingOverflow(parameter.bytes?.count ?? 0).partialValue
        }
        storage.reserveCapacity(total)
        for (index, parameter) in parameters.enumerated() {
            if let bytes = parameter.bytes {
                guard let length = Int32(exactly: bytes.count) else {
                    throw LibPQError(.encoding, "parameter $\(index + 1) has \(bytes.count) bytes; the limit is 2 GiB")
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
        self.count = count
        self.storage = storage
        self.offsets = offsets
        self.lengths = lengths
        self.types = parameters.map { Oid($0.type.rawValue) }
        self.formats = [Int32](repeating: 1, count: parameters.count)
    }

    /// Calls `body` with the count, OIDs, value pointers, lengths and formats, valid only inside `body`.
    func withUnsafePointers<R>(
        _ body: (
            Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
            UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        try storage.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else {
                throw LibPQError(.encoding, "could not lay out the parameters")
            }
            let chars = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { chars + $0 } }
            return try body(count, types, values, lengths, formats)
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
