// `[UInt8]` is `bytea`, not an array of numbers: UInt8 supplies the array coding.

extension UInt8: PostgresArrayElement {
    /// `bytea`: a byte array is binary data.
    package static var postgresArrayType: PostgresType { .bytea }

    /// Appends the bytes as they are.
    package static func encodeArray(_ elements: [UInt8], into buffer: inout [UInt8]) throws {
        buffer.append(contentsOf: elements)
    }

    /// Copies a `bytea` value.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for other types.
    package static func decodeArray(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> [UInt8] {
        guard type == .bytea else { throw LibPQError.typeMismatch(type, [UInt8].self) }
        return [UInt8](bytes)
    }
}
