/// Up to 16 bytes of a value's binary representation, held in place: a bound integer, date or UUID needs no
/// array of its own (a heap allocation, its metadata and its release, per parameter of every statement).
package struct InlineBytes: Sendable {
    /// The most bytes held.
    package static var capacity: Int { 16 }

    private var words: (UInt64, UInt64) = (0, 0)
    private var length: UInt8 = 0

    /// How many bytes are held.
    package var count: Int { Int(length) }

    /// An integer's bytes in network byte order (at most its first 16 for a wider one: no type we bind has
    /// more than 8).
    package init<T: FixedWidthInteger>(bigEndian value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { copy($0) }
    }

    /// The first ``capacity`` bytes of `bytes` (a caller passes at most that many).
    package init(copying bytes: UnsafeRawBufferPointer) {
        copy(bytes)
    }

    private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        let count = min(bytes.count, Self.capacity)
        Swift.withUnsafeMutableBytes(of: &words) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        }
        length = UInt8(truncatingIfNeeded: count)
    }

    /// Calls `body` with the bytes, valid only inside it.
    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
}

/// A type whose binary representation always fits in ``InlineBytes`` (integers, floating point, booleans,
/// dates, UUIDs): encoded once, in place, and appended from there when an array is wanted.
package protocol PostgresInlineEncodable: PostgresEncodable {
    /// The binary representation.
    ///
    /// - Throws: ``LibPQError`` with code `.encoding` when the value cannot be represented (an infinite `Date`).
    func encodeInline() throws -> InlineBytes
}

extension PostgresInlineEncodable {
    /// Appends ``encodeInline()``'s bytes.
    package func encode(into buffer: inout [UInt8]) throws {
        try encodeInline().withUnsafeBytes { buffer.append(contentsOf: $0) }
    }

    /// ``encodeInline()``.
    package func inlineBytes() throws -> InlineBytes? { try encodeInline() }
}
