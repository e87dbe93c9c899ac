/// String matching with PostgreSQL's semantics: `LIKE` patterns (`%`, `_`, `\` escape) over Unicode scalars,
/// and contains / begins with / ends with as `LIKE` with the operand escaped.
///
/// A case-insensitive match lower-cases both sides with ``CaseFolding/lowercased(_:)`` first, exactly as
/// PostgreSQL's `ILIKE` does under the ICU root collation `und-x-icu` (which `PostgresStore` names
/// explicitly, so the database's own locale never changes the answer) with an ICU of the same Unicode
/// version (`folding`).
package enum StringMatcher {
    /// Whether `value` matches `operand` under `kind`.
    package static func matches(
        _ value: String, _ kind: CVPredicate.StringMatch, _ operand: String, caseInsensitive: Bool,
        folding: CaseFolding = .default
    ) -> Bool {
        let subject = caseInsensitive ? folding.lowercased(value) : Array(value.unicodeScalars)
        let text = caseInsensitive ? folding.lowercased(operand) : Array(operand.unicodeScalars)
        switch kind {
        case .like: return like(subject, pattern: text)
        case .contains:
            if text.isEmpty { return true }
            guard subject.count >= text.count else { return false }
            for start in 0...(subject.count - text.count) where subject[start..<start + text.count].elementsEqual(text)
            {
                return true
            }
            return false
        case .beginsWith: return subject.starts(with: text)
        case .endsWith: return subject.count >= text.count && subject.suffix(text.count).elementsEqual(text)
        }
    }

    private enum Token: Equatable {
        case literal(Unicode.Scalar)
        case one
        case any
    }

    private static func tokens(_ pattern: [Unicode.Scalar]) -> [Token] {
        var result: [Token] = []
        var index = 0
        while index < pattern.count {
            let scalar = pattern[index]
            switch scalar {
            case "\\":
                index += 1
                if index < pattern.count { result.append(.literal(pattern[index])) }
            case "%": if result.last != .any { result.append(.any) }
            case "_": result.append(.one)
            default: result.append(.literal(scalar))
            }
            index += 1
        }
        return result
    }

    /// Greedy matching with backtracking to the last `%`: linear for typical patterns.
    private static func like(_ subject: [Unicode.Scalar], pattern: [Unicode.Scalar]) -> Bool {
        let pattern = tokens(pattern)
        var s = 0
        var p = 0
        var star: Int?
        var mark = 0
        while s < subject.count {
            if p < pattern.count {
                switch pattern[p] {
                case .any:
                    star = p
                    mark = s
                    p += 1
                    continue
                case .one:
                    s += 1
                    p += 1
                    continue
                case .literal(let scalar) where scalar == subject[s]:
                    s += 1
                    p += 1
                    continue
                case .literal: break
                }
            }
            guard let starIndex = star else { return false }
            p = starIndex + 1
            mark += 1
            s = mark
        }
        while p < pattern.count, pattern[p] == .any { p += 1 }
        return p == pattern.count
    }
}
