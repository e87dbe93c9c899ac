extension Int64: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `bigint`.
    package static var postgresType: PostgresType { .int8 }

    /// The value in network byte order.
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: self) }

    /// Reads a `bigint` or a narrower integer column.
    ///
    /// - Throws: LibPQError `.decoding` for wider integer types, floating point and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int64 {
        try decodeInteger(from: bytes, type: type)
    }
}
