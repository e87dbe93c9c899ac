extension Float: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `real`.
    package static var postgresType: PostgresType { .float4 }

    /// Appends the IEEE 754 bits in network byte order (NaN and infinities included).
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: bitPattern) }

    /// Reads a `real`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for `double precision` (narrowing), integers and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Float {
        guard type == .float4 else { throw LibPQError.typeMismatch(type, Float.self) }
        guard bytes.count == 4 else { throw LibPQError.malformed(type, Float.self, "expected 4 bytes") }
        return Float(bitPattern: bytes.loadBigEndian(as: UInt32.self))
    }
}
