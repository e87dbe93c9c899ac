extension Int32: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `integer`.
    package static var postgresType: PostgresType { .int4 }

    /// The value in network byte order.
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: self) }

    /// Reads a `integer` or a narrower integer column.
    ///
    /// - Throws: LibPQError `.decoding` for wider integer types, floating point and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int32 {
        try decodeInteger(from: bytes, type: type)
    }
}
