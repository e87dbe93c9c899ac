import Foundation

extension AttributeValue {
    /// This value as a value of another attribute type, or `nil` when that would lose information.
    ///
    /// Integers convert among the integer types when they fit, and to `double`, `float` and `decimal` when
    /// exactly representable; `float` widens to `double` and a `double` narrows to `float` only when exact.
    /// ``null`` converts to every type. Nothing else converts.
    public func converted(to type: AttributeType) -> AttributeValue? {
        if isNull || self.type == type { return self }
        switch type {
        case .int16: return exactInteger.flatMap { Int16(exactly: $0) }.map(AttributeValue.int16)
        case .int32: return exactInteger.flatMap { Int32(exactly: $0) }.map(AttributeValue.int32)
        case .int64: return exactInteger.map(AttributeValue.int64)
        case .double:
            switch self {
            case .float(let value): return .double(Double(value))
            default: return exactIntegerStorage.flatMap { Double(exactly: $0) }.map(AttributeValue.double)
            }
        case .float:
            switch self {
            case .double(let value): return Float(exactly: value).map(AttributeValue.float)
            default: return exactIntegerStorage.flatMap { Float(exactly: $0) }.map(AttributeValue.float)
            }
        case .decimal:
            return exactIntegerStorage.map { AttributeValue.decimal(Decimal($0)) }
        case .bool, .string, .data, .date, .uuid, .uri:
            return nil
        }
    }

    /// The value of an integer case.
    private var exactIntegerStorage: Int64? {
        switch self {
        case .int16(let value): return Int64(value)
        case .int32(let value): return Int64(value)
        case .int64(let value): return value
        default: return nil
        }
    }

    /// The value as an integer: integer cases, and floating-point values that are whole and in range.
    private var exactInteger: Int64? {
        switch self {
        case .double(let value): return Int64(exactly: value)
        case .float(let value): return Int64(exactly: value)
        default: return exactIntegerStorage
        }
    }

    /// The value's type for error messages (`int64`, `null`); never the value itself.
    package var typeDescription: String { type?.rawValue ?? "null" }
}
