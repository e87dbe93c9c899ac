import Foundation

extension UUID: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `uuid`.
    package static var postgresType: PostgresType { .uuid }

    /// The 16 bytes.
    package func encodeInline() -> InlineBytes {
        withUnsafeBytes(of: uuid) { InlineBytes(copying: $0) }
    }

    /// Reads a `uuid`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> UUID {
        guard type == .uuid else { throw LibPQError.typeMismatch(type, UUID.self) }
        guard bytes.count == 16 else { throw LibPQError.malformed(type, UUID.self, "expected 16 bytes") }
        return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
    }
}
