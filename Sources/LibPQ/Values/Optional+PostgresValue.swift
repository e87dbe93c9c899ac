extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    /// The wrapped type's PostgreSQL type (NULL is typed).
    package static var postgresType: PostgresType { Wrapped.postgresType }

    /// `true` for `nil`.
    package var isPostgresNull: Bool { self == nil }

    /// Appends the wrapped value; appends nothing for `nil`, which ``PostgresValue/init(_:)`` turns into NULL.
    package func encode(into buffer: inout [UInt8]) throws {
        if let value = self { try value.encode(into: &buffer) }
    }

    /// The wrapped value's, held in place when its type holds it so; `nil` for `nil`.
    package func inlineBytes() throws -> InlineBytes? {
        guard let value = self else { return nil }
        return try value.inlineBytes()
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// Reads the wrapped type.
    ///
    /// - Throws: ``LibPQError`` `.decoding` when the value does not fit the wrapped type.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Wrapped? {
        try Wrapped.decode(from: bytes, type: type)
    }

    /// NULL decodes to `nil`.
    package static func decodeNull(type: PostgresType) throws -> Wrapped? { nil }
}

extension Optional: PostgresArrayElement where Wrapped: PostgresArrayElement & PostgresEncodable & PostgresDecodable {}
