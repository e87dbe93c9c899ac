/// A type whose Swift arrays are encoded as, and decoded from, a 1-D PostgreSQL array.
///
/// `[Int64]` is a `bigint[]`, `[String?]` a `text[]` with NULL elements (use them with `= ANY($1)` or
/// `unnest($1::bigint[])`). `UInt8` is the exception: `[UInt8]` is `bytea`.
package protocol PostgresArrayElement {
    /// The PostgreSQL type of `[Self]`.
    static var postgresArrayType: PostgresType { get }

    /// Appends the binary representation of `elements` as one value of type ``postgresArrayType``.
    ///
    /// - Throws: ``LibPQError`` `.encoding` when an element cannot be encoded or the array type is unknown.
    static func encodeArray(_ elements: [Self], into buffer: inout [UInt8]) throws

    /// Reads an array value.
    ///
    /// - Throws: ``LibPQError`` `.decoding` when the value is not a 1-D array of a fitting element type,
    ///   or holds a NULL element and `Self` is not optional.
    static func decodeArray(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> [Self]
}

extension PostgresArrayElement where Self: PostgresEncodable & PostgresDecodable {
    /// The array type of ``PostgresEncodable/postgresType``, or `.unspecified` if there is none.
    package static var postgresArrayType: PostgresType { postgresType.arrayType ?? .unspecified }

    /// Writes the array header (dimensions, NULL flag, element OID, size, lower bound 1) and the elements.
    package static func encodeArray(_ elements: [Self], into buffer: inout [UInt8]) throws {
        guard postgresType.arrayType != nil else {
            throw LibPQError(.encoding, "arrays of \(postgresType) are not supported (only 1-D arrays)")
        }
        try BinaryArrayHeader.append(
            to: &buffer, elementType: postgresType, count: elements.count,
            hasNull: elements.contains { $0.isPostgresNull })
        for element in elements {
            if element.isPostgresNull {
                buffer.appendBigEndian(Int32(-1))
                continue
            }
            let lengthOffset = buffer.count
            buffer.appendBigEndian(Int32(0))
            try element.encode(into: &buffer)
            guard let length = Int32(exactly: buffer.count - lengthOffset - 4) else {
                throw LibPQError(.encoding, "an array element is larger than 2 GiB")
            }
            buffer.storeBigEndian(length, at: lengthOffset)
        }
    }

    /// Reads a 1-D (or empty) array, passing the element OID from its header to each element's decoder.
    package static func decodeArray(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> [Self] {
        guard type.elementType != nil || type == .unknown else { throw LibPQError.typeMismatch(type, [Self].self) }
        var reader = BinaryReader(bytes, type: type, swiftType: [Self].self)
        let dimensions = try reader.read(Int32.self)
        _ = try reader.read(Int32.self)  // has-NULL flag; each element says it again
        let elementType = PostgresType(rawValue: try reader.read(UInt32.self))
        if dimensions == 0 { return [] }
        guard dimensions == 1 else {
            throw LibPQError(.decoding, "cannot decode a \(dimensions)-dimensional \(type) as \([Self].self)")
        }
        let count = Int(try reader.read(Int32.self))
        _ = try reader.read(Int32.self)  // lower bound
        guard count >= 0, count <= reader.remaining / 4 else {
            throw LibPQError.malformed(type, [Self].self, "bad element count \(count)")
        }
        var result: [Self] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            let length = try reader.read(Int32.self)
            if length < 0 {
                result.append(try decodeNull(type: elementType))
            } else {
                result.append(try decode(from: try reader.readBytes(Int(length)), type: elementType))
            }
        }
        return result
    }
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    /// The array type of the element (`bytea` for `[UInt8]`).
    package static var postgresType: PostgresType { Element.postgresArrayType }

    /// Appends the array in PostgreSQL's binary array format.
    ///
    /// - Throws: ``LibPQError`` `.encoding` when an element cannot be encoded.
    package func encode(into buffer: inout [UInt8]) throws { try Element.encodeArray(self, into: &buffer) }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    /// Reads a 1-D array (or `bytea` for `[UInt8]`).
    ///
    /// - Throws: ``LibPQError`` `.decoding` when the value does not fit.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> [Element] {
        try Element.decodeArray(from: bytes, type: type)
    }
}

extension Array: PostgresArrayElement where Element: PostgresArrayElement {}

/// The header of PostgreSQL's binary 1-D array format: dimensions, NULL flag, element OID, and for a
/// non-empty array its size and lower bound 1. Each element follows as a 4-byte length (-1 for NULL) and
/// its bytes.
package enum BinaryArrayHeader {
    /// Appends the header of an array of `count` elements of `elementType`.
    ///
    /// - Throws: ``LibPQError`` `.encoding` when `count` does not fit the format.
    package static func append(to buffer: inout [UInt8], elementType: PostgresType, count: Int, hasNull: Bool) throws {
        buffer.appendBigEndian(Int32(count == 0 ? 0 : 1))
        buffer.appendBigEndian(Int32(hasNull ? 1 : 0))
        buffer.appendBigEndian(elementType.rawValue)
        guard count > 0 else { return }
        guard let size = Int32(exactly: count) else {
            throw LibPQError(.encoding, "an array of \(count) elements is too long")
        }
        buffer.appendBigEndian(size)
        buffer.appendBigEndian(Int32(1))
    }
}
