extension Bool: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `boolean`.
    package static var postgresType: PostgresType { .bool }

    /// One byte, 1 or 0.
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: UInt8(self ? 1 : 0)) }

    /// Reads a `boolean`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for any other type.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Bool {
        guard type == .bool else { throw LibPQError.typeMismatch(type, Bool.self) }
        guard bytes.count == 1 else { throw LibPQError.malformed(type, Bool.self, "expected 1 byte") }
        return bytes[0] != 0
    }
}
