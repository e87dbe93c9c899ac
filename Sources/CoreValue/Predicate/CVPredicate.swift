/// A filter over an entity's attributes, checked against the model and compiled by each store.
///
/// Named `CVPredicate` so that it does not clash with Foundation's `Predicate`. Build one from cases or with
/// the key-path-like operators in `CVPredicate+Operators.swift`:
///
/// ```swift
/// let adults: CVPredicate = .key("age") > 30 && .key("department") == "Sales"
/// ```
public indirect enum CVPredicate: Sendable, Hashable {
    /// Compares an attribute with a value.
    case comparison(key: String, ComparisonOperator, AttributeValue)
    /// The attribute's value is one of these.
    case isIn(key: String, [AttributeValue])
    /// The attribute's value lies between the bounds, inclusive.
    case between(key: String, AttributeValue, AttributeValue)
    /// A string match: `LIKE`-style pattern, contains, begins with or ends with.
    case stringMatch(key: String, StringMatch, String, caseInsensitive: Bool)
    /// The attribute is null (or the to-one relationship is empty).
    case isNull(key: String)
    /// All of the predicates hold (true when empty).
    case and([CVPredicate])
    /// Any of the predicates holds (false when empty).
    case or([CVPredicate])
    /// The predicate does not hold.
    case not(CVPredicate)
    /// Some object the relationship `key` reaches matches `predicate`, whose keys are the destination
    /// entity's: the related object of a to-one relationship (false when there is none), any member of a
    /// to-many one (SQL `EXISTS`). Never unknown, so it negates as Swift does: `.not(.related(...))` holds
    /// when no related object matches.
    case related(key: String, CVPredicate)
    /// Always true.
    case `true`
    /// Always false.
    case `false`

    /// A comparison operator.
    public enum ComparisonOperator: String, Sendable, Hashable, Codable {
        /// `=`
        case equal = "="
        /// `<>`
        case notEqual = "<>"
        /// `<`
        case lessThan = "<"
        /// `<=`
        case lessThanOrEqual = "<="
        /// `>`
        case greaterThan = ">"
        /// `>=`
        case greaterThanOrEqual = ">="
    }

    /// A kind of string match.
    public enum StringMatch: String, Sendable, Hashable, Codable {
        /// A `LIKE` pattern: `%` matches any run of characters, `_` any one character, `\` escapes.
        case like
        /// The string contains the operand.
        case contains
        /// The string begins with the operand.
        case beginsWith
        /// The string ends with the operand.
        case endsWith
    }
}

/// One sort key: an attribute and a direction. Named so that it does not clash with Foundation's types.
public struct CVSortDescriptor: Sendable, Hashable {
    /// The attribute to sort by.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Creates a sort key.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}
