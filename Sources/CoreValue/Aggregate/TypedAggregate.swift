import Foundation

/// A numeric property type that `sum(_:)` and `average(_:)` fold, with the types of its total and its mean
/// (by default those of the integer types).
public protocol AggregateNumber: AttributeValueConvertible {
    /// The type of a total: `Int64` for the integer types, `Double` for `Float` and `Double`, `Decimal`.
    associatedtype Total: AttributeValueConvertible = Int64
    /// The type of a mean: `Double`, or `Decimal` for `Decimal`.
    associatedtype Mean: AttributeValueConvertible = Double
}

extension Int: AggregateNumber {}
extension Int16: AggregateNumber {}
extension Int32: AggregateNumber {}
extension Int64: AggregateNumber {}
extension Float: AggregateNumber {
    /// Totals are `Double`.
    public typealias Total = Double
}
extension Double: AggregateNumber {
    /// Totals are `Double`.
    public typealias Total = Double
}
extension Decimal: AggregateNumber {
    /// Totals are `Decimal`.
    public typealias Total = Decimal
    /// Means are `Decimal`.
    public typealias Mean = Decimal
}

/// An aggregate of a struct's property, typed by its result: `.sum(\.balance)` is an `Int64`,
/// `.average(\.balance)` a `Double`, `.minimum(\.openedAt)` a `Date`. Pass it to
/// `aggregate(_:_:where:)` (one result) or `aggregate(_:_:groupedBy:where:)`
/// (one per group). Meanings and nulls as in SQL: see ``AggregateFunction``.
///
/// Not `Sendable` (a key path is not): the async calls read its attribute name on the caller's side.
public struct Aggregate<Root, Value> {
    let function: AggregateFunction
    let keyPath: AnyKeyPath?
    let decode: (AttributeValue) -> Value?

    private init(
        _ function: AggregateFunction, _ keyPath: AnyKeyPath?, _ decode: @escaping (AttributeValue) -> Value?
    ) {
        self.function = function
        self.keyPath = keyPath
        self.decode = decode
    }

    /// The total of a numeric property; `nil` when no row has a value.
    public static func sum<V: AggregateNumber>(_ keyPath: KeyPath<Root, V>) -> Aggregate<Root, V.Total> {
        .init(.sum, keyPath) { V.Total(attributeValue: $0) }
    }
    /// The total of an optional numeric property, its `nil`s left out.
    public static func sum<V: AggregateNumber>(_ keyPath: KeyPath<Root, V?>) -> Aggregate<Root, V.Total> {
        .init(.sum, keyPath) { V.Total(attributeValue: $0) }
    }
    /// The mean of a numeric property; `nil` when no row has a value.
    public static func average<V: AggregateNumber>(_ keyPath: KeyPath<Root, V>) -> Aggregate<Root, V.Mean> {
        .init(.average, keyPath) { V.Mean(attributeValue: $0) }
    }
    /// The mean of an optional numeric property, its `nil`s left out.
    public static func average<V: AggregateNumber>(_ keyPath: KeyPath<Root, V?>) -> Aggregate<Root, V.Mean> {
        .init(.average, keyPath) { V.Mean(attributeValue: $0) }
    }
    /// The least value of an ordered property (a number, a date, a string or URL in byte order).
    public static func minimum<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V>) -> Aggregate<Root, V> {
        .init(.minimum, keyPath) { V(attributeValue: $0) }
    }
    /// The least value of an optional ordered property, its `nil`s left out.
    public static func minimum<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V?>) -> Aggregate<Root, V> {
        .init(.minimum, keyPath) { V(attributeValue: $0) }
    }
    /// The greatest value of an ordered property.
    public static func maximum<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V>) -> Aggregate<Root, V> {
        .init(.maximum, keyPath) { V(attributeValue: $0) }
    }
    /// The greatest value of an optional ordered property, its `nil`s left out.
    public static func maximum<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V?>) -> Aggregate<Root, V> {
        .init(.maximum, keyPath) { V(attributeValue: $0) }
    }
    /// How many rows have a value of an optional property (not `nil`).
    public static func count<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V?>) -> Aggregate<Root, Int64> {
        .init(.count, keyPath) { Int64(attributeValue: $0) }
    }
    /// How many rows.
    public static var rows: Aggregate<Root, Int64> {
        .init(.countRows, nil) { Int64(attributeValue: $0) }
    }
}

/// A property type a struct's aggregates can be grouped by: every type a property stores as, and optionals
/// of them (rows without a value form one group, keyed `nil`).
public protocol AggregateGroupKey: Hashable {
    /// A group's key from its stored value; `nil` when the value cannot be one.
    static func groupKey(_ value: AttributeValue) -> Self?
}

extension AggregateGroupKey where Self: AttributeValueConvertible {
    /// The value read as this type; a null is none.
    public static func groupKey(_ value: AttributeValue) -> Self? { Self(attributeValue: value) }
}

extension Int: AggregateGroupKey {}
extension Int16: AggregateGroupKey {}
extension Int32: AggregateGroupKey {}
extension Int64: AggregateGroupKey {}
extension Double: AggregateGroupKey {}
extension Float: AggregateGroupKey {}
extension Bool: AggregateGroupKey {}
extension String: AggregateGroupKey {}
extension Data: AggregateGroupKey {}
extension Date: AggregateGroupKey {}
extension Decimal: AggregateGroupKey {}
extension UUID: AggregateGroupKey {}
extension URL: AggregateGroupKey {}

extension Optional: AggregateGroupKey where Wrapped: AggregateGroupKey {
    /// `nil` for a null (the group of rows without a value), else the wrapped type's key.
    public static func groupKey(_ value: AttributeValue) -> Wrapped?? {
        value.isNull ? .some(nil) : Wrapped.groupKey(value).map { .some($0) }
    }
}

/// One group of `aggregate(_:_:groupedBy:where:)`: the property's value the group shares, and the
/// aggregate's result for it (`nil` when no row of the group has a value to fold).
public struct AggregateGroup<Key: AggregateGroupKey, Value> {
    /// The value the group's rows share.
    public var key: Key
    /// The aggregate of the group.
    public var value: Value?

    /// Creates a group's result.
    public init(key: Key, value: Value?) {
        self.key = key
        self.value = value
    }
}

extension AggregateGroup: Sendable where Key: Sendable, Value: Sendable {}
extension AggregateGroup: Equatable where Value: Equatable {}
extension AggregateGroup: Hashable where Value: Hashable {}
