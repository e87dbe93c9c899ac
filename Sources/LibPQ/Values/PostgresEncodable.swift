/// A Swift type that can be written as a bound parameter in PostgreSQL's binary format.
///
/// Conforming types append their binary representation (without a length prefix) to a buffer.
/// ```swift
/// let value = try PostgresValue(Int64(42))   // type bigint, bytes 00 00 00 00 00 00 00 2a
/// ```
package protocol PostgresEncodable {
    /// The PostgreSQL type the bytes are written for.
    static var postgresType: PostgresType { get }

    /// Appends the binary representation of `self` to `buffer`.
    ///
    /// - Throws: ``LibPQError`` with code `.encoding` when the value cannot be represented (for example a
    ///   `String` holding a NUL byte, or an infinite `Date`).
    func encode(into buffer: inout [UInt8]) throws

    /// The binary representation held in place, for a type whose bytes always fit there
    /// (``PostgresInlineEncodable``); `nil` (the default) when the bytes go into an array (``encode(into:)``).
    func inlineBytes() throws -> InlineBytes?

    /// Whether this value is SQL NULL; `false` except for `Optional.none`.
    var isPostgresNull: Bool { get }
}

extension PostgresEncodable {
    /// Values are not NULL unless they say so.
    package var isPostgresNull: Bool { false }

    /// Encoded into an array unless the type says otherwise.
    package func inlineBytes() throws -> InlineBytes? { nil }
}

/// A Swift type that can be read from a result cell in PostgreSQL's binary format.
package protocol PostgresDecodable {
    /// Reads a value from the binary representation `bytes` of a cell of server type `type`.
    ///
    /// - Throws: ``LibPQError`` with code `.decoding` when the server type or the bytes do not fit.
    static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Self

    /// The value for SQL NULL.
    ///
    /// - Throws: ``LibPQError`` with code `.decoding`, except for `Optional`, which returns `nil`.
    static func decodeNull(type: PostgresType) throws -> Self
}

extension PostgresDecodable {
    /// Non-optional types cannot hold NULL.
    package static func decodeNull(type: PostgresType) throws -> Self {
        throw LibPQError(.decoding, "cannot decode NULL of type \(type) as \(Self.self); use an optional")
    }
}

extension LibPQError {
    /// The error for a server type that does not fit a Swift type.
    static func typeMismatch(_ type: PostgresType, _ swiftType: Any.Type) -> LibPQError {
        LibPQError(.decoding, "cannot decode a value of type \(type) as \(swiftType)")
    }

    /// The error for bytes that are not a valid binary representation.
    static func malformed(_ type: PostgresType, _ swiftType: Any.Type, _ reason: String) -> LibPQError {
        LibPQError(.decoding, "malformed \(type) value for \(swiftType): \(reason)")
    }
}
