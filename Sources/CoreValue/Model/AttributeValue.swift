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
        }
    }

    /// Whether this value is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
