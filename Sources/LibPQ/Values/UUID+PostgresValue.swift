import Foundation

extension UUID: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `uuid`.
    package static var postgresType: PostgresType { .uuid }

    /// Appends the 16 bytes.
    package func encode(into buffer: inout [UInt8]) throws {
        withUnsafeBytes(of: uuid) { buffer.append(contentsOf: $0) }
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
