@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

/// Encodes a column of attribute values as one binary PostgreSQL array, in one pass over the values and
/// straight into the parameter's bytes: no intermediate `[T?]`, no per-element value or buffer.
///
/// This is what every batched write binds (one array per column), so it runs once per value saved.
package enum ArrayEncoding {
    /// The binary `type[]` of `values`.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidValue`` when a value is not of `type` (or text holds a NUL
    ///   character); the driver's encoding error for a value it cannot represent.
    package static func encode(_ values: [AttributeValue], as type: AttributeType) throws -> PostgresValue {
        let element = BindEncoding.postgresType(of: type)
        guard let arrayType = element.arrayType else {
            throw PostgresStoreError(.invalidValue, "\(type.rawValue) has no array type")
        }
        let nulls = values.reduce(0) { $0 + ($1.isNull ? 1 : 0) }
        var buffer: [UInt8] = []
        if let width = fixedWidth(of: type) {
            try BinaryArrayHeader.append(to: &buffer, elementType: element, count: values.count, hasNull: nulls > 0)
            return PostgresValue(
                type: arrayType, bytes: try fixedWidthArray(values, type, width, nulls, header: buffer))
        }
        // Variable-size elements (text, bytes, numerics, UUIDs): a guess of 16 bytes each, to reserve once.
        buffer.reserveCapacity(20 + values.count * (4 + 16))
        try BinaryArrayHeader.append(to: &buffer, elementType: element, count: values.count, hasNull: nulls > 0)
        for value in values { try appendElement(value, as: type, to: &buffer) }
        return PostgresValue(type: arrayType, bytes: buffer)
    }

    /// The encoded size of one non-null element of a fixed-width type; `nil` for types of variable size.
    private static func fixedWidth(of type: AttributeType) -> Int? {
        switch type {
        case .bool: return 1
        case .int16: return 2
        case .int32, .float: return 4
        case .int64, .double, .date: return 8
        case .uuid, .string, .data, .decimal, .uri: return nil
        }
    }

    /// An array of a fixed-width type (keys, versions, positions, numbers, dates), sized exactly and written in
    /// place: every bound array of keys takes this path, so it costs a store per element, not a bounds-checked
    /// append per byte.
    private static func fixedWidthArray(
        _ values: [AttributeValue], _ type: AttributeType, _ width: Int, _ nulls: Int, header: [UInt8]
    ) throws -> [UInt8] {
        let size = header.count + values.count * 4 + (values.count - nulls) * width
        return try [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            header.withUnsafeBytes { bytes.copyMemory(from: $0) }
            var offset = header.count
            func store<T: FixedWidthInteger>(_ value: T) {
                bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
                offset += MemoryLayout<T>.size
            }
            for value in values {
                if value.isNull {
                    store(Int32(-1))
                    continue
                }
                store(Int32(width))
                switch (value, type) {
                case (.int16(let number), .int16): store(number)
                case (.int32(let number), .int32): store(number)
                case (.int64(let number), .int64): store(number)
                case (.float(let number), .float): store(number.bitPattern)
                case (.double(let number), .double): store(number.bitPattern)
                case (.bool(let flag), .bool): store(UInt8(flag ? 1 : 0))
                case (.date(let date), .date): store(try date.postgresMicroseconds())
                default: throw mismatch(value, type)
                }
            }
            initialized = offset
        }
    }

    /// Appends one value as an array element or a binary COPY field: its length (`-1` for NULL), then its
    /// binary representation as `type`.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidValue`` when the value is not of `type` (or text holds a
    ///   NUL character); the driver's encoding error for a value it cannot represent.
    package static func appendElement(_ value: AttributeValue, as type: AttributeType, to buffer: inout [UInt8])
        throws
    {
        switch (value, type) {
        case (.null, _): buffer.appendBig(Int32(-1))
        case (.int16(let number), .int16): buffer.appendFixed(number)
        case (.int32(let number), .int32): buffer.appendFixed(number)
        case (.int64(let number), .int64): buffer.appendFixed(number)
        case (.float(let number), .float): buffer.appendFixed(number.bitPattern)
        case (.double(let number), .double): buffer.appendFixed(number.bitPattern)
        case (.bool(let flag), .bool):
            buffer.appendBig(Int32(1))
            buffer.append(flag ? 1 : 0)
        case (.string(let text), .string):
            try buffer.appendSized { buffer in
                let start = buffer.count
                // A native string's bytes in one copy; others (bridged, say) byte by byte.
                var text = text
                text.withUTF8 { buffer.append(contentsOf: $0) }
                if buffer[start...].contains(0) {
                    throw PostgresStoreError(
                        .invalidValue, "text contains a NUL character, which PostgreSQL text cannot hold")
                }
            }
        case (.data(let bytes), .data):
            try buffer.appendSized { buffer in bytes.withUnsafeBytes { buffer.append(contentsOf: $0) } }
        case (.date(let date), .date): try buffer.appendSized { try date.encode(into: &$0) }
        case (.decimal(let number), .decimal): try buffer.appendSized { try number.encode(into: &$0) }
        case (.uuid(let uuid), .uuid): try buffer.appendSized { try uuid.encode(into: &$0) }
        case (.uri(let url), .uri):
            try buffer.appendSized { buffer in
                var text = url.absoluteString
                text.withUTF8 { buffer.append(contentsOf: $0) }
            }
        default: throw mismatch(value, type)
        }
    }

    private static func mismatch(_ value: AttributeValue, _ type: AttributeType) -> PostgresStoreError {
        PostgresStoreError(
            .invalidValue, "a \(type.rawValue) value was expected, not a \(value.type?.rawValue ?? "null")")
    }

    /// Appends a binary COPY tuple's field count.
    package static func appendFieldCount(_ count: Int16, to buffer: inout [UInt8]) {
        buffer.appendBig(count)
    }

}

extension [UInt8] {
    /// Appends a fixed-width integer in network byte order.
    fileprivate mutating func appendBig<T: FixedWidthInteger>(_ value: T) {
        // Byte by byte, most significant first: appending a buffer of 4 or 8 bytes went through the generic
        // `append(contentsOf:)`, several times the cost.
        var shift = (MemoryLayout<T>.size - 1) * 8
        while shift >= 0 {
            append(UInt8(truncatingIfNeeded: value >> shift))
            shift -= 8
        }
    }

    /// Appends an element's length and a fixed-width integer in network byte order.
    fileprivate mutating func appendFixed<T: FixedWidthInteger>(_ value: T) {
        appendBig(Int32(MemoryLayout<T>.size))
        appendBig(value)
    }

    /// Appends an element's length, then what `body` writes.
    fileprivate mutating func appendSized(_ body: (inout [UInt8]) throws -> Void) throws {
        let lengthOffset = count
        appendBig(Int32(0))
        try body(&self)
        guard let length = Int32(exactly: count - lengthOffset - 4) else {
            throw PostgresStoreError(.invalidValue, "an array element is larger than 2 GiB")
        }
        Swift.withUnsafeBytes(of: length.bigEndian) { bytes in
            for (offset, byte) in bytes.enumerated() { self[lengthOffset + offset] = byte }
        }
    }
}
