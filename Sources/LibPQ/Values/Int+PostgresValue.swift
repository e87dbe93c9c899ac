extension Int: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `bigint` (Swift's `Int` is 64-bit on every supported platform).
    public static var postgresType: PostgresType { .int8 }

    /// Appends the value as a big-endian 64-bit integer.
    public func encode(into buffer: inout [UInt8]) throws { buffer.appendBigEndian(Int64(self)) }

    /// Reads a `bigint`, `integer` or `smallint`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for floating point and other types.
    public static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int {
        try decodeInteger(from: bytes, type: type)
    }
}
