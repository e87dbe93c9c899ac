extension Int64: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    /// `bigint`.
    public static var postgresType: PostgresType { .int8 }

    /// Appends the value in network byte order.
    public func encode(into buffer: inout [UInt8]) throws { buffer.appendBigEndian(self) }

    /// Reads a `bigint` or a narrower integer column.
    ///
    /// - Throws: LibPQError `.decoding` for wider integer types, floating point and other types.
    public static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Int64 {
        try decodeInteger(from: bytes, type: type)
    }
}
