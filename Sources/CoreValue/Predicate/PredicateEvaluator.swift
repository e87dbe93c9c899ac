import Foundation

/// Evaluates a validated ``CVPredicate`` in memory with SQL's three-valued logic, so that a context's pending
/// objects and ``MemoryStore`` rows match exactly the rows PostgreSQL would return.
///
/// A comparison with a null value is *unknown*; `NOT unknown` is unknown; a row matches only when the whole
/// predicate is true. Strings compare by Unicode scalar (the `C` collation); case-insensitive matches
/// lower-case both sides.
package enum PredicateEvaluator {
    /// How a store or context reads the rows a predicate is evaluated on.
    package struct Reader<Row> {
        /// An attribute's value.
        package var attribute: (Row, String) -> AttributeValue
        /// Whether an attribute or a to-one relationship is null.
        package var isNull: (Row, String) -> Bool
        /// The rows a relationship reaches (none, one, or the members of a to-many).
        package var related: (Row, String) throws -> [Row]
        /// How case-insensitive matches lower-case: as the store's server does.
        package var folding: CaseFolding

        package init(
            attribute: @escaping (Row, String) -> AttributeValue, isNull: @escaping (Row, String) -> Bool,
            related: @escaping (Row, String) throws -> [Row], folding: CaseFolding = .default
        ) {
            self.attribute = attribute
            self.isNull = isNull
            self.related = related
            self.folding = folding
        }
    }

    /// Whether `lhs op rhs` holds for two non-null values (false when their types differ).
    package static func holds(_ lhs: AttributeValue, _ op: CVPredicate.ComparisonOperator, _ rhs: AttributeValue)
        -> Bool
    {
        guard let order = ValueOrder.compare(lhs, rhs) else { return false }
        return holds(order, op)
    }

    private static func holds(_ order: Int, _ op: CVPredicate.ComparisonOperator) -> Bool {
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .lessThan: return order < 0
        case .lessThanOrEqual: return order <= 0
        case .greaterThan: return order > 0
        case .greaterThanOrEqual: return order >= 0
        }
    }

    /// Whether a row matches a validated predicate. Recursion is bounded by the predicate's depth, which
    /// validation limits to ``CVPredicate/maximumDepth``.
    ///
    /// - Throws: What `reader.related` throws.
    package static func matches<Row>(_ predicate: CVPredicate, _ row: Row, _ reader: Reader<Row>) throws -> Bool {
        try evaluate(predicate, row, reader) == true
    }

    private static func evaluate<Row>(_ predicate: CVPredicate, _ row: Row, _ reader: Reader<Row>) throws -> Bool? {
        let attribute = { (key: String) in reader.attribute(row, key) }
        switch predicate {
        case .comparison(let key, let op, let operand):
            let value = attribute(key)
            guard !value.isNull, !operand.isNull, let order = ValueOrder.compare(value, operand) else { return nil }
            return holds(order, op)
        case .isIn(let key, let operands):
            let value = attribute(key)
            if value.isNull { return nil }
            var sawNull = false
            for operand in operands {
                if operand.isNull { sawNull = true } else if ValueOrder.compare(value, operand) == 0 { return true }
            }
            return sawNull ? nil : false
        case .between(let key, let lower, let upper):
            let value = attribute(key)
            guard let low = ValueOrder.compare(value, lower), let high = ValueOrder.compare(value, upper),
                !value.isNull, !lower.isNull, !upper.isNull
            else { return nil }
            return low >= 0 && high <= 0
        case .stringMatch(let key, let kind, let text, let caseInsensitive):
            guard case .string(let value) = attribute(key) else { return nil }
            return StringMatcher.matches(value, kind, text, caseInsensitive: caseInsensitive, folding: reader.folding)
        case .isNull(let key):
            return reader.isNull(row, key)
        case .related(let key, let inner):
            for other in try reader.related(row, key) where try evaluate(inner, other, reader) == true {
                return true
            }
            return false
        case .and(let predicates):
            var result: Bool? = true
            for predicate in predicates {
                switch try evaluate(predicate, row, reader) {
                case false?: return false
                case nil: result = nil
                case true?: break
                }
            }
            return result
        case .or(let predicates):
            var result: Bool? = false
            for predicate in predicates {
                switch try evaluate(predicate, row, reader) {
                case true?: return true
                case nil: result = nil
                case false?: break
                }
            }
            return result
        case .not(let predicate):
            return try evaluate(predicate, row, reader).map { !$0 }
        case .true: return true
        case .false: return false
        }
    }
}

/// The total order stores sort by: PostgreSQL's default order for each column type.
package enum ValueOrder {
    /// Compares two non-null values of the same type: negative, zero or positive; `nil` when the types
    /// differ or either is null.
    package static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int? {
        switch (lhs, rhs) {
        case (.int16(let a), .int16(let b)): return sign(a, b)
        case (.int32(let a), .int32(let b)): return sign(a, b)
        case (.int64(let a), .int64(let b)): return sign(a, b)
        case (.double(let a), .double(let b)): return floatingOrder(a, b)
        case (.float(let a), .float(let b)): return floatingOrder(a, b)
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        case (.string(let a), .string(let b)): return bytes(a.utf8, b.utf8)
        case (.data(let a), .data(let b)): return bytes(a, b)
        case (.date(let a), .date(let b)): return sign(microseconds(a), microseconds(b))
        case (.decimal(let a), .decimal(let b)): return sign(a, b)
        case (.uuid(let a), .uuid(let b)):
            let (x, y) = (halves(a), halves(b))
            return x.0 != y.0 ? sign(x.0, y.0) : sign(x.1, y.1)
        case (.uri(let a), .uri(let b)): return bytes(a.absoluteString.utf8, b.absoluteString.utf8)
        default: return nil
        }
    }

    /// Whether ``compare(_:_:)`` orders values of this type as PostgreSQL's btree orders their column:
    /// integers by value, text in byte order (`COLLATE "C"`, as every text column is declared; a URL's
    /// too), UUIDs by their bytes. Writers that lock rows in this order in several statements cannot deadlock
    /// each other.
    package static func matchesServerOrder(_ type: AttributeType) -> Bool {
        switch type {
        case .int16, .int32, .int64, .string, .uuid, .uri: return true
        default: return false
        }
    }

    /// Compares for sorting: nulls sort as larger than every value (last ascending, first descending).
    package static func sortOrder(_ lhs: AttributeValue, _ rhs: AttributeValue, ascending: Bool) -> Int {
        let order: Int
        switch (lhs.isNull, rhs.isNull) {
        case (true, true): order = 0
        case (true, false): order = 1
        case (false, true): order = -1
        case (false, false): order = compare(lhs, rhs) ?? 0
        }
        return ascending ? order : -order
    }

    private static func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    /// A date as `timestamptz` keeps it, in microseconds to the nearest (what `MemoryStore` stores, too): an
    /// operand with finer digits (a `Date()` taken now) compares as the server compares it once bound, so
    /// `== date` finds the row saved with that date on both stores.
    static func microseconds(_ date: Date) -> Double {
        (date.timeIntervalSinceReferenceDate * 1_000_000).rounded()
    }

    /// PostgreSQL's order of `float8` and `float4`: NaN equals NaN and is greater than every other value
    /// (infinity included), so `== NaN` finds the NaNs, sorting puts them last and `max` is NaN. Swift's `<`
    /// and `==` are false for NaN either way, which left no order at all (a sort that changed between runs).
    private static func floatingOrder<F: FloatingPoint>(_ a: F, _ b: F) -> Int {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return 0
        case (true, false): return 1
        case (false, true): return -1
        case (false, false): return sign(a, b)
        }
    }

    /// A UUID's 16 bytes as two big-endian words: compared first to last, they order as the bytes do (the
    /// server's `uuid` order).
    private static func halves(_ value: UUID) -> (UInt64, UInt64) {
        let u = value.uuid
        func word(_ b: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)) -> UInt64 {
            let high = UInt64(b.0) << 56 | UInt64(b.1) << 48 | UInt64(b.2) << 40 | UInt64(b.3) << 32
            return high | UInt64(b.4) << 24 | UInt64(b.5) << 16 | UInt64(b.6) << 8 | UInt64(b.7)
        }
        return (word((u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7)), word((u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15)))
    }

    /// Byte order, shorter first on a common prefix; reads both sequences in place (sorting calls this
    /// O(n log n) times, so no copies).
    private static func bytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }
}
