extension String: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `text`.
    package static var postgresType: PostgresType { .text }

    /// Appends the UTF-8 bytes.
    ///
    /// - Throws: ``LibPQError`` `.encoding` when the string contains a NUL character, which PostgreSQL
    ///   text cannot hold.
    package func encode(into buffer: inout [UInt8]) throws {
        let start = buffer.count
        buffer.append(contentsOf: utf8)
        if buffer[start...].contains(0) {
            buffer.removeSubrange(start...)
            throw LibPQError(.encoding, "a String containing a NUL character (U+0000) cannot be stored as text")
        }
    }

    /// Reads `text`, `character varying`, `character`, `name` or an untyped literal.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> String {
        switch type {
        case .text, .varchar, .bpchar, .name, .unknown: return String(decoding: bytes, as: UTF8.self)
        default: throw LibPQError.typeMismatch(type, String.self)
        }
    }
}
