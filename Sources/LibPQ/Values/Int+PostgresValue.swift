extension Int: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `bigint` (Swift's `Int` is 64-bit on every supported platform).
    package static var postgresType: PostgresType { .int8 }

    /// The value as a big-endian 64-bit integer.
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: Int64(self)) }

    /// Reads a `bigint`, `integer` or `smallint`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for floating point and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int {
        try decodeInteger(from: bytes, type: type)
    }
}
