/// One bound parameter or one result cell: a type and its binary representation.
///
/// `bytes == nil` is SQL NULL. Build values from Swift values with ``init(_:)``:
/// ```swift
/// try connection.query("select * from t where id = $1", [PostgresValue(Int64(7))])
/// ```
package struct PostgresValue: Sendable, Hashable {
    /// The value's PostgreSQL type; `.unspecified` lets the server infer it.
    package var type: PostgresType
    /// The binary representation; `nil` is SQL NULL.
    package var bytes: [UInt8]?

    /// Wraps a type and already encoded bytes (`nil` for NULL).
    package init(type: PostgresType, bytes: [UInt8]?) {
        self.type = type
        self.bytes = bytes
    }

    /// SQL NULL of the given type.
    package static func null(_ type: PostgresType) -> PostgresValue {
        PostgresValue(type: type, bytes: nil)
    }

    /// Encodes a Swift value; `Optional.none` becomes NULL of the wrapped type.
    ///
    /// - Throws: ``LibPQError`` with code `.encoding` when the value cannot be represented.
    package init<T: PostgresEncodable>(_ value: T) throws {
        type = T.postgresType
        if value.isPostgresNull {
            bytes = nil
        } else {
            var buffer: [UInt8] = []
            try value.encode(into: &buffer)
            bytes = buffer
        }
    }

    /// Whether this is SQL NULL.
    package var isNull: Bool { bytes == nil }

    /// Decodes the value as a Swift type (NULL only decodes into an `Optional`).
    ///
    /// - Throws: ``LibPQError`` with code `.decoding` when the type or the bytes do not fit.
    package func decode<T: PostgresDecodable>(_ swiftType: T.Type = T.self) throws -> T {
        guard let bytes else { return try T.decodeNull(type: type) }
        return try bytes.withUnsafeBytes { try T.decode(from: $0, type: type) }
    }
}
