import Foundation

extension Data: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `bytea`.
    package static var postgresType: PostgresType { .bytea }

    /// Appends the bytes as they are.
    package func encode(into buffer: inout [UInt8]) throws { buffer.append(contentsOf: self) }

    /// Copies a `bytea` value.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Data {
        guard type == .bytea else { throw LibPQError.typeMismatch(type, Data.self) }
        return Data(bytes)
    }
}
