/// String matching with PostgreSQL's semantics: `LIKE` patterns (`%`, `_`, `\` escape) over Unicode scalars,
/// and contains / begins with / ends with as `LIKE` with the operand escaped.
///
/// A case-insensitive match lower-cases both sides with ``CaseFolding/lowercased(_:)`` first, exactly as
/// PostgreSQL's `ILIKE` does under the ICU root collation `und-x-icu` (which `PostgresStore` names
/// explicitly, so the database's own locale never changes the answer).
package enum StringMatcher {
    /// Whether `value` matches `operand` under `kind`.
    package static func matches(
        _ value: String, _ kind: CVPredicate.StringMatch, _ operand: String, caseInsensitive: Bool
    ) -> Bool {
        let subject = caseInsensitive ? CaseFolding.lowercased(value) : Array(value.unicodeScalars)
        let text = caseInsensitive ? CaseFolding.lowercased(operand) : Array(operand.unicodeScalars)
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

/// The one definition of case-insensitive text matching both stores use: Unicode's full lower-case mapping
/// of every scalar, without any language's rules, plus the context rule for Greek capital sigma (a final
/// `Σ` becomes `ς`). This is what ICU's root locale does, and so what PostgreSQL's `lower()` and `ILIKE` do
/// under the collation `und-x-icu`, whatever the database's own locale is.
///
/// So `İ` (U+0130) lower-cases to `i` followed by U+0307, and matches only text that has a dotted capital
/// `İ` or that same pair; `ẞ` matches `ß`; no language-specific folding (Turkish dotless `ı`) applies.
package enum CaseFolding {
    /// The lower-cased scalars of `text`.
    package static func lowercased(_ text: String) -> [Unicode.Scalar] {
        let scalars = Array(text.unicodeScalars)
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(scalars.count)
        for (index, scalar) in scalars.enumerated() {
            if scalar.isASCII {
                let value = scalar.value
                result.append(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(value + 0x20) ?? scalar : scalar)
            } else if scalar == "\u{03A3}" {
                result.append(isFinalSigma(scalars, at: index) ? "\u{03C2}" : "\u{03C3}")
            } else {
                result.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            }
        }
        return result
    }

    /// Unicode's Final_Sigma condition, as ICU tests it: a cased letter before (skipping case-ignorable
    /// scalars) and none after.
    private static func isFinalSigma(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        casedLetter(scalars, from: index - 1, step: -1) && !casedLetter(scalars, from: index + 1, step: 1)
    }

    /// Whether the first scalar from `start` in direction `step` that is not case-ignorable is cased. As in
    /// ICU, case-ignorable is tested first: a scalar that is both (U+0345, U+02B0) is skipped.
    private static func casedLetter(_ scalars: [Unicode.Scalar], from start: Int, step: Int) -> Bool {
        var position = start
        while position >= 0, position < scalars.count {
            let properties = scalars[position].properties
            if properties.isCaseIgnorable || scalars[position] == "\u{0307}" {
                position += step
                continue
            }
            return properties.isCased
        }
        return false
    }
}
