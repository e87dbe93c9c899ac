/// One bound parameter or one result cell: a type and its binary representation.
///
/// `bytes == nil` is SQL NULL. Build values from Swift values with ``init(_:)``:
/// ```swift
/// try connection.query("select * from t where id = $1", [PostgresValue(Int64(7))])
/// ```
package struct PostgresValue: Sendable, Hashable {
    /// The value's PostgreSQL type; `.unspecified` lets the server infer it.
    package var type: PostgresType
    private let storage: Storage

    /// Where the bytes are: a fixed-width value's in the value itself, others' in an array.
    private enum Storage: Sendable {
        case null
        case inline(InlineBytes)
        case array([UInt8])
    }

    /// Wraps a type and already encoded bytes (`nil` for NULL).
    package init(type: PostgresType, bytes: [UInt8]?) {
        self.type = type
        self.storage = bytes.map(Storage.array) ?? .null
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
            storage = .null
        } else if let inline = try value.inlineBytes() {
            storage = .inline(inline)
        } else {
            var buffer: [UInt8] = []
            try value.encode(into: &buffer)
            storage = .array(buffer)
        }
    }

    /// The binary representation; `nil` is SQL NULL. Made for the caller when the value holds its bytes in
    /// place: ``withBytes(_:)`` reads them without a copy.
    package var bytes: [UInt8]? {
        switch storage {
        case .null: nil
        case .inline(let inline): inline.withUnsafeBytes { Array($0) }
        case .array(let array): array
        }
    }

    /// How many bytes the value has; `nil` for SQL NULL.
    package var byteCount: Int? {
        switch storage {
        case .null: nil
        case .inline(let inline): inline.count
        case .array(let array): array.count
        }
    }

    /// Calls `body` with the binary representation, valid only inside it; `nil` (without calling it) for NULL.
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        switch storage {
        case .null: nil
        case .inline(let inline): try inline.withUnsafeBytes(body)
        case .array(let array): try array.withUnsafeBytes(body)
        }
    }

    /// Whether this is SQL NULL.
    package var isNull: Bool {
        if case .null = storage { return true }
        return false
    }

    /// Equal when of the same type with the same bytes, wherever they are held.
    package static func == (lhs: PostgresValue, rhs: PostgresValue) -> Bool {
        guard lhs.type == rhs.type, lhs.byteCount == rhs.byteCount else { return false }
        return lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } ?? false } ?? true
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(byteCount)
        withBytes { hasher.combine(bytes: $0) }
    }

    /// Decodes the value as a Swift type (NULL only decodes into an `Optional`).
    ///
    /// - Throws: ``LibPQError`` with code `.decoding` when the type or the bytes do not fit.
    package func decode<T: PostgresDecodable>(_ swiftType: T.Type = T.self) throws -> T {
        guard let value = try withBytes({ try T.decode(from: $0, type: type) }) else {
            return try T.decodeNull(type: type)
        }
        return value
    }
}
