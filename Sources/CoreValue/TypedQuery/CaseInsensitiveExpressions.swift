import Foundation

/// Expressions `#Predicate` builds for the case-insensitive string methods that Foundation on Linux has no
/// expression for.
///
/// The macro turns `$0.name.localizedStandardContains("an")` into
/// `PredicateExpressions.build_localizedStandardContains(...)` and `caseInsensitiveCompare` into
/// `build_caseInsensitiveCompare(...)`; Foundation on Linux defines neither, so CoreValue does, with the
/// expressions below. Both match by lower-casing with the ICU root locale (the same rule
/// `PostgresStore` sends): case-insensitive, but not diacritic-insensitive or locale-aware as
/// `localizedStandardContains` is on Apple platforms. `Predicate.evaluate` gives the same answers as the
/// stores.
public enum CVPredicateExpressions {
    /// `root.localizedStandardContains(other)`: `root` contains `other`, ignoring case.
    public struct CaseInsensitiveContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output == String, Other.Output == String {
        /// The string searched.
        public let root: Root
        /// The string looked for.
        public let other: Other

        /// Creates the expression.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// Whether the lower-cased `root` contains the lower-cased `other`.
        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            StringMatcher.matches(
                try root.evaluate(bindings), .contains, try other.evaluate(bindings), caseInsensitive: true)
        }
    }

    /// `root.caseInsensitiveCompare(other)`: the order of the two strings lower-cased, by Unicode scalar.
    public struct CaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output == String, Other.Output == String {
        /// The string compared.
        public let root: Root
        /// The string it is compared with.
        public let other: Other

        /// Creates the expression.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// `.orderedSame` when the strings are equal ignoring case; otherwise their order lower-cased.
        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            let left = CaseFolding.lowercased(try root.evaluate(bindings))
            let right = CaseFolding.lowercased(try other.evaluate(bindings))
            if left == right { return .orderedSame }
            return left.lexicographicallyPrecedes(right) ? .orderedAscending : .orderedDescending
        }
    }
}

extension CVPredicateExpressions.CaseInsensitiveContains: Sendable where Root: Sendable, Other: Sendable {}
extension CVPredicateExpressions.CaseInsensitiveContains: Codable where Root: Codable, Other: Codable {}
extension CVPredicateExpressions.CaseInsensitiveContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension CVPredicateExpressions.CaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}
extension CVPredicateExpressions.CaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {}
extension CVPredicateExpressions.CaseInsensitiveCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

#if !canImport(Darwin)
    extension PredicateExpressions {
        /// What `#Predicate` builds for `localizedStandardContains` (see ``CVPredicateExpressions``).
        public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other)
            -> CVPredicateExpressions.CaseInsensitiveContains<Root, Other>
        {
            CVPredicateExpressions.CaseInsensitiveContains(root: root, other: other)
        }

        /// What `#Predicate` builds for `caseInsensitiveCompare` (see ``CVPredicateExpressions``).
        public static func build_caseInsensitiveCompare<Root, Other>(_ root: Root, _ other: Other)
            -> CVPredicateExpressions.CaseInsensitiveCompare<Root, Other>
        {
            CVPredicateExpressions.CaseInsensitiveCompare(root: root, other: other)
        }
    }
#endif
