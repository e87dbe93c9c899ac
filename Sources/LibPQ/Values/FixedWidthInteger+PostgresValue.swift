// Shared reading of smallint, integer and bigint cells, widening as needed.

extension FixedWidthInteger where Self: SignedInteger {
    /// Reads an integer cell of type `int2`, `int4` or `int8` into `Self` when the server type is not wider
    /// than `Self` (narrowing is refused even when the value would fit).
    static func decodeInteger(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Self {
        let size: Int
        switch type {
        case .int2: size = 2
        case .int4: size = 4
        case .int8: size = 8
        default: throw LibPQError.typeMismatch(type, Self.self)
        }
        guard size <= MemoryLayout<Self>.size else { throw LibPQError.typeMismatch(type, Self.self) }
        guard bytes.count == size else {
            throw LibPQError.malformed(type, Self.self, "expected \(size) bytes, got \(bytes.count)")
        }
        switch size {
        case 2: return Self(truncatingIfNeeded: bytes.loadBigEndian(as: Int16.self))
        case 4: return Self(truncatingIfNeeded: bytes.loadBigEndian(as: Int32.self))
        default: return Self(truncatingIfNeeded: bytes.loadBigEndian(as: Int64.self))
        }
    }
}
