// Big-endian reads and writes shared by the binary codecs.

extension Array where Element == UInt8 {
    /// Appends `value` in network byte order.
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// Overwrites four bytes at `offset` with `value` in network byte order (for length prefixes).
    mutating func storeBigEndian(_ value: Int32, at offset: Int) {
        let bits = UInt32(bitPattern: value)
        self[offset] = UInt8(truncatingIfNeeded: bits >> 24)
        self[offset + 1] = UInt8(truncatingIfNeeded: bits >> 16)
        self[offset + 2] = UInt8(truncatingIfNeeded: bits >> 8)
        self[offset + 3] = UInt8(truncatingIfNeeded: bits)
    }
}

extension UnsafeRawBufferPointer {
    /// Loads a big-endian integer at `offset`; the caller has checked the bounds.
    func loadBigEndian<T: FixedWidthInteger>(at offset: Int = 0, as type: T.Type) -> T {
        T(bigEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

/// A bounds-checked cursor over a binary value, for the variable-length formats (numeric, arrays).
struct BinaryReader {
    let bytes: UnsafeRawBufferPointer
    let type: PostgresType
    let swiftType: Any.Type
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer, type: PostgresType, swiftType: Any.Type) {
        self.bytes = bytes
        self.type = type
        self.swiftType = swiftType
    }

    var remaining: Int { bytes.count - offset }

    mutating func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw LibPQError.malformed(type, swiftType, "value ends early") }
        let value = bytes.loadBigEndian(at: offset, as: T.self)
        offset += size
        return value
    }

    /// Returns the next `count` bytes as a slice of the underlying buffer (no copy).
    mutating func readBytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw LibPQError.malformed(type, swiftType, "value ends early") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        offset += count
        return slice
    }
}
