/// The left-hand side of a predicate builder: an attribute's name.
///
/// ```swift
/// let predicate: CVPredicate = .key("age") > 30 && .key("name").contains("an", caseInsensitive: true)
/// let order = [CVPredicateKey.key("age").descending]
/// ```
public struct CVPredicateKey: Sendable, Hashable {
    /// The attribute's name.
    public var name: String

    /// Creates a key.
    public init(_ name: String) { self.name = name }

    /// A key, written `.key("age")` where a key is expected.
    public static func key(_ name: String) -> CVPredicateKey { CVPredicateKey(name) }

    /// The value equals `rhs`.
    public static func == <V: CVPredicateValue>(lhs: CVPredicateKey, rhs: V) -> CVPredicate {
        .comparison(key: lhs.name, .equal, rhs.attributeValue)
    }
    /// The value differs from `rhs` (and is not null).
    public static func != <V: CVPredicateValue>(lhs: CVPredicateKey, rhs: V) -> CVPredicate {
        .comparison(key: lhs.name, .notEqual, rhs.attributeValue)
    }
    /// The value is less than `rhs`.
    public static func < <V: CVPredicateValue>(lhs: CVPredicateKey, rhs: V) -> CVPredicate {
        .comparison(key: lhs.name, .lessThan, rhs.attributeValue)
    }
    /// The value is at most `rhs`.
    public static func <= <V: CVPredicateValue>(lhs: CVPredicateKey, rhs: V) -> CVPredicate {
        .comparison(key: lhs.name, .lessThanOrEqual, rhs.attributeValue)
    }
    /// The value is greater than `rhs`.
    public static func > <V: CVPredicateValue>(lhs: CVPredicateKey, rhs: V) -> CVPredicate {
        .comparison(key: lhs.name, .greaterThan, rhs.attributeValue)
    }
    /// The value is at least `rhs`.
    public static func >= <V: CVPredicateValue>(lhs: CVPredicateKey, rhs: V) -> CVPredicate {
        .comparison(key: lhs.name, .greaterThanOrEqual, rhs.attributeValue)
    }
    /// The value equals an attribute value; `== .null` tests for null.
    public static func == (lhs: CVPredicateKey, rhs: AttributeValue) -> CVPredicate {
        .comparison(key: lhs.name, .equal, rhs)
    }
    /// The value is null: `.key("position") == nil`.
    public static func == (lhs: CVPredicateKey, rhs: _OptionalNilComparisonType) -> CVPredicate {
        .isNull(key: lhs.name)
    }
    /// The value is not null: `.key("position") != nil`.
    public static func != (lhs: CVPredicateKey, rhs: _OptionalNilComparisonType) -> CVPredicate {
        .not(.isNull(key: lhs.name))
    }

    /// The value is one of `values`.
    public func `in`<V: CVPredicateValue>(_ values: [V]) -> CVPredicate {
        .isIn(key: name, values.map(\.attributeValue))
    }
    /// The value lies between the bounds, inclusive.
    public func between<V: CVPredicateValue>(_ lower: V, _ upper: V) -> CVPredicate {
        .between(key: name, lower.attributeValue, upper.attributeValue)
    }
    /// The string contains `text`.
    public func contains(_ text: String, caseInsensitive: Bool = false) -> CVPredicate {
        .stringMatch(key: name, .contains, text, caseInsensitive: caseInsensitive)
    }
    /// The string begins with `text`.
    public func beginsWith(_ text: String, caseInsensitive: Bool = false) -> CVPredicate {
        .stringMatch(key: name, .beginsWith, text, caseInsensitive: caseInsensitive)
    }
    /// The string ends with `text`.
    public func endsWith(_ text: String, caseInsensitive: Bool = false) -> CVPredicate {
        .stringMatch(key: name, .endsWith, text, caseInsensitive: caseInsensitive)
    }
    /// The string matches a `LIKE` pattern (`%` any run, `_` any one character, `\` escapes).
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> CVPredicate {
        .stringMatch(key: name, .like, pattern, caseInsensitive: caseInsensitive)
    }
    /// The value (or to-one relationship) is null.
    public var isNull: CVPredicate { .isNull(key: name) }
    /// The value (or to-one relationship) is not null.
    public var isNotNull: CVPredicate { .not(.isNull(key: name)) }
    /// Sorts by this key, smallest first (nulls last).
    public var ascending: CVSortDescriptor { CVSortDescriptor(key: name, ascending: true) }
    /// Sorts by this key, largest first (nulls first).
    public var descending: CVSortDescriptor { CVSortDescriptor(key: name, ascending: false) }
}

extension CVSortDescriptor {
    /// A key, so that sort lists read `[.key("age").descending, .key("name").ascending]`.
    public static func key(_ name: String) -> CVPredicateKey { CVPredicateKey(name) }
}
