extension Int16: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `smallint`.
    package static var postgresType: PostgresType { .int2 }

    /// The value in network byte order.
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: self) }

    /// Reads a `smallint` or a narrower integer column.
    ///
    /// - Throws: LibPQError `.decoding` for wider integer types, floating point and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int16 {
        try decodeInteger(from: bytes, type: type)
    }
}
