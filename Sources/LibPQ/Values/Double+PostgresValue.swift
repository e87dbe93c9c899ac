extension Double: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// `double precision`.
    package static var postgresType: PostgresType { .float8 }

    /// Appends the IEEE 754 bits in network byte order (NaN and infinities included).
    package func encodeInline() -> InlineBytes { InlineBytes(bigEndian: bitPattern) }

    /// Reads a `double precision` or (widening exactly) a `real`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for integers, numeric and other types.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Double {
        switch (type, bytes.count) {
        case (.float8, 8): return Double(bitPattern: bytes.loadBigEndian(as: UInt64.self))
        case (.float4, 4): return Double(Float(bitPattern: bytes.loadBigEndian(as: UInt32.self)))
        case (.float8, _), (.float4, _): throw LibPQError.malformed(type, Double.self, "wrong length \(bytes.count)")
        default: throw LibPQError.typeMismatch(type, Double.self)
        }
    }
}
