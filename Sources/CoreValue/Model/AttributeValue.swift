import Foundation

/// A single attribute value as a store sees it: typed, `Sendable`, and independent of any Swift struct.
///
/// Boxing turns struct properties into attribute values; stores persist them; unboxing reads them back.
public enum AttributeValue: Sendable, Hashable {
    /// SQL `NULL`: an optional attribute with no value.
    case null
    /// A 16-bit integer.
    case int16(Int16)
    /// A 32-bit integer.
    case int32(Int32)
    /// A 64-bit integer.
    case int64(Int64)
    /// A double-precision float.
    case double(Double)
    /// A single-precision float.
    case float(Float)
    /// A Boolean.
    case bool(Bool)
    /// Text.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A date.
    case date(Date)
    /// A decimal number.
    case decimal(Decimal)
    /// A UUID.
    case uuid(UUID)
    /// A URL, stored as its absolute string.
    case uri(URL)

    /// The attribute type this value has, or `nil` for ``null``.
    public var type: AttributeType? {
        switch self {
        case .null: return nil
        case .int16: return .int16
        case .int32: return .int32
        case .int64: return .int64
        case .double: return .double
        case .float: return .float
        case .bool: return .bool
        case .string: return .string
        case .data: return .data
        case .date: return .date
        case .decimal: return .decimal
        case .uuid: return .uuid
        case .uri: return .uri
        }
    }

    /// Whether this value is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension AttributeValue {
    /// Whether two values are the same stored value.
    ///
    /// As in PostgreSQL: NaN equals NaN (unlike Swift's `Double`), so re-boxing an unchanged struct that holds
    /// NaN records no change; text compares by its UTF-8 bytes (unlike Swift's `String`, which compares by
    /// canonical equivalence), so "é" and "e\u{301}" are different values and changing one into the other is
    /// saved.
    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.int16(let a), .int16(let b)): return a == b
        case (.int32(let a), .int32(let b)): return a == b
        case (.int64(let a), .int64(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.float(let a), .float(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.bool(let a), .bool(let b)): return a == b
        case (.string(let a), .string(let b)): return sameUTF8(a, b)
        case (.data(let a), .data(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.decimal(let a), .decimal(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.uuid(let a), .uuid(let b)): return a == b
        // As stored: the same absolute string, byte for byte.
        case (.uri(let a), .uri(let b)): return sameUTF8(a.absoluteString, b.absoluteString)
        default: return false
        }
    }

    /// Whether two strings have the same UTF-8 bytes (``Unchecked/sameUTF8(_:_:)``, one comparison of their bytes).
    static func sameUTF8(_ left: String, _ right: String) -> Bool {
        Unchecked.sameUTF8(left, right)
    }

    /// Hashes the value consistently with ``==(_:_:)`` (every NaN hashes alike).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .int16(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .int32(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .int64(let value): hasher.combine(3 as UInt8); hasher.combine(value)
        case .double(let value):
            hasher.combine(4 as UInt8)
            if value.isNaN { hasher.combine(UInt64.max) } else { hasher.combine(value) }
        case .float(let value):
            hasher.combine(5 as UInt8)
            if value.isNaN { hasher.combine(UInt32.max) } else { hasher.combine(value) }
        case .bool(let value): hasher.combine(6 as UInt8); hasher.combine(value)
        case .string(let value):
            hasher.combine(7 as UInt8)
            // By its bytes, as `==` compares text (`sameUTF8(_:_:)`).
            Unchecked.hashUTF8(value, into: &hasher)
        case .data(let value): hasher.combine(8 as UInt8); hasher.combine(value)
        case .date(let value): hasher.combine(9 as UInt8); hasher.combine(value)
        case .decimal(let value):
            hasher.combine(10 as UInt8)
            if value.isNaN { hasher.combine(UInt64.max) } else { hasher.combine(value) }
        case .uuid(let value): hasher.combine(11 as UInt8); hasher.combine(value)
        case .uri(let value):
            hasher.combine(12 as UInt8)
            Unchecked.hashUTF8(value.absoluteString, into: &hasher)
        }
    }
}
