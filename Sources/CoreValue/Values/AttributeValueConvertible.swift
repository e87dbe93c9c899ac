import Foundation

/// A Swift type that stores as one attribute value: the types of DESIGN §2 (`Int`, `Int16`, `Int32`,
/// `Int64`, `Double`, `Float`, `Bool`, `String`, `Data`, `Date`, `Decimal`, `UUID`, `URL`).
///
/// Boxing turns such properties into ``AttributeValue``s, unboxing turns them back, and predicates accept
/// them as operands (`.key("age") > 30`). Conversions never lose information: reading an `int64` value of
/// 70000 as `Int16` fails instead of wrapping.
public protocol AttributeValueConvertible {
    /// The attribute type a value of this type stores as.
    static var attributeType: AttributeType { get }
    /// The value as an attribute value.
    var attributeValue: AttributeValue { get }
    /// Reads a value, converting losslessly from another attribute type; `nil` when the value has another
    /// type or does not fit.
    init?(attributeValue: AttributeValue)
}

/// The operand type of predicate builders: every ``AttributeValueConvertible`` type.
public typealias CVPredicateValue = AttributeValueConvertible

extension Int: AttributeValueConvertible {
    /// `int64`.
    public static var attributeType: AttributeType { .int64 }
    /// The value as `int64`.
    public var attributeValue: AttributeValue { .int64(Int64(self)) }
    /// Reads an integer that fits.
    public init?(attributeValue: AttributeValue) {
        if case .int64(let value) = attributeValue, let int = Int(exactly: value) {
            self = int
            return
        }
        guard case .int64(let value)? = attributeValue.converted(to: .int64), let int = Int(exactly: value) else {
            return nil
        }
        self = int
    }
}

extension Int16: AttributeValueConvertible {
    /// `int16`.
    public static var attributeType: AttributeType { .int16 }
    /// The value as `int16`.
    public var attributeValue: AttributeValue { .int16(self) }
    /// Reads an integer that fits.
    public init?(attributeValue: AttributeValue) {
        // The value's own case first: no conversion (and no copy of the value) for the usual read.
        if case .int16(let value) = attributeValue {
            self = value
            return
        }
        guard case .int16(let value)? = attributeValue.converted(to: .int16) else { return nil }
        self = value
    }
}

extension Int32: AttributeValueConvertible {
    /// `int32`.
    public static var attributeType: AttributeType { .int32 }
    /// The value as `int32`.
    public var attributeValue: AttributeValue { .int32(self) }
    /// Reads an integer that fits.
    public init?(attributeValue: AttributeValue) {
        // The value's own case first: no conversion (and no copy of the value) for the usual read.
        if case .int32(let value) = attributeValue {
            self = value
            return
        }
        guard case .int32(let value)? = attributeValue.converted(to: .int32) else { return nil }
        self = value
    }
}

extension Int64: AttributeValueConvertible {
    /// `int64`.
    public static var attributeType: AttributeType { .int64 }
    /// The value as `int64`.
    public var attributeValue: AttributeValue { .int64(self) }
    /// Reads an integer that fits.
    public init?(attributeValue: AttributeValue) {
        // The value's own case first: no conversion (and no copy of the value) for the usual read.
        if case .int64(let value) = attributeValue {
            self = value
            return
        }
        guard case .int64(let value)? = attributeValue.converted(to: .int64) else { return nil }
        self = value
    }
}

extension Double: AttributeValueConvertible {
    /// `double`.
    public static var attributeType: AttributeType { .double }
    /// The value as `double`.
    public var attributeValue: AttributeValue { .double(self) }
    /// Reads a `double`, a `float` or an exactly representable integer.
    public init?(attributeValue: AttributeValue) {
        // The value's own case first: no conversion (and no copy of the value) for the usual read.
        if case .double(let value) = attributeValue {
            self = value
            return
        }
        guard case .double(let value)? = attributeValue.converted(to: .double) else { return nil }
        self = value
    }
}

extension Float: AttributeValueConvertible {
    /// `float`.
    public static var attributeType: AttributeType { .float }
    /// The value as `float`.
    public var attributeValue: AttributeValue { .float(self) }
    /// Reads a `float`, or a `double` or integer that is exactly representable.
    public init?(attributeValue: AttributeValue) {
        // The value's own case first: no conversion (and no copy of the value) for the usual read.
        if case .float(let value) = attributeValue {
            self = value
            return
        }
        guard case .float(let value)? = attributeValue.converted(to: .float) else { return nil }
        self = value
    }
}

extension Bool: AttributeValueConvertible {
    /// `bool`.
    public static var attributeType: AttributeType { .bool }
    /// The value as `bool`.
    public var attributeValue: AttributeValue { .bool(self) }
    /// Reads a `bool`.
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let value) = attributeValue else { return nil }
        self = value
    }
}

extension String: AttributeValueConvertible {
    /// `string`.
    public static var attributeType: AttributeType { .string }
    /// The value as `string`.
    public var attributeValue: AttributeValue { .string(self) }
    /// Reads a `string`.
    public init?(attributeValue: AttributeValue) {
        guard case .string(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Data: AttributeValueConvertible {
    /// `data`.
    public static var attributeType: AttributeType { .data }
    /// The value as `data`.
    public var attributeValue: AttributeValue { .data(self) }
    /// Reads `data`.
    public init?(attributeValue: AttributeValue) {
        guard case .data(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Date: AttributeValueConvertible {
    /// `date`.
    public static var attributeType: AttributeType { .date }
    /// The value as `date`.
    public var attributeValue: AttributeValue { .date(self) }
    /// Reads a `date`.
    public init?(attributeValue: AttributeValue) {
        guard case .date(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Decimal: AttributeValueConvertible {
    /// `decimal`.
    public static var attributeType: AttributeType { .decimal }
    /// The value as `decimal`.
    public var attributeValue: AttributeValue { .decimal(self) }
    /// Reads a `decimal` or an integer.
    public init?(attributeValue: AttributeValue) {
        // The value's own case first: no conversion (and no copy of the value) for the usual read.
        if case .decimal(let value) = attributeValue {
            self = value
            return
        }
        guard case .decimal(let value)? = attributeValue.converted(to: .decimal) else { return nil }
        self = value
    }
}

extension UUID: AttributeValueConvertible {
    /// `uuid`.
    public static var attributeType: AttributeType { .uuid }
    /// The value as `uuid`.
    public var attributeValue: AttributeValue { .uuid(self) }
    /// Reads a `uuid`.
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let value) = attributeValue else { return nil }
        self = value
    }
}

extension URL: AttributeValueConvertible {
    /// `uri`.
    public static var attributeType: AttributeType { .uri }
    /// The value as `uri`.
    public var attributeValue: AttributeValue { .uri(self) }
    /// Reads a `uri`.
    public init?(attributeValue: AttributeValue) {
        guard case .uri(let value) = attributeValue else { return nil }
        self = value
    }
}
