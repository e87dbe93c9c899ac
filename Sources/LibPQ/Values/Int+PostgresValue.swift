extension Int: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `bigint` (Swift's `Int` is 64-bit on every supported platform).
    package static var postgresType: PostgresType { .int8 }

    /// Appends the value as a big-endian 64-bit integer.
    package func encode(into buffer: inout [UInt8]) throws { buffer.appendBigEndian(Int64(self)) }

    /// Reads a `bigint`, `integer` or `smallint`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for floating point and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int {
        try decodeInteger(from: bytes, type: type)
    }
}
