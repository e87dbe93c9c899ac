extension Int16: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `smallint`.
    package static var postgresType: PostgresType { .int2 }

    /// Appends the value in network byte order.
    package func encode(into buffer: inout [UInt8]) throws { buffer.appendBigEndian(self) }

    /// Reads a `smallint` or a narrower integer column.
    ///
    /// - Throws: LibPQError `.decoding` for wider integer types, floating point and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int16 {
        try decodeInteger(from: bytes, type: type)
    }
}
