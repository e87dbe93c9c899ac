extension CVPredicate {
    /// A key for the builder operators: `CVPredicate.key("age") > 30`.
    public static func key(_ name: String) -> CVPredicateKey { CVPredicateKey(name) }

    /// Both predicates hold; nested conjunctions are flattened.
    public static func && (lhs: CVPredicate, rhs: CVPredicate) -> CVPredicate {
        switch (lhs, rhs) {
        case (.and(let left), .and(let right)): return .and(left + right)
        case (.and(let left), _): return .and(left + [rhs])
        case (_, .and(let right)): return .and([lhs] + right)
        default: return .and([lhs, rhs])
        }
    }

    /// Either predicate holds; nested disjunctions are flattened.
    public static func || (lhs: CVPredicate, rhs: CVPredicate) -> CVPredicate {
        switch (lhs, rhs) {
        case (.or(let left), .or(let right)): return .or(left + right)
        case (.or(let left), _): return .or(left + [rhs])
        case (_, .or(let right)): return .or([lhs] + right)
        default: return .or([lhs, rhs])
        }
    }

    /// The predicate does not hold.
    public static prefix func ! (predicate: CVPredicate) -> CVPredicate { .not(predicate) }
}
