/// The one definition of case-insensitive text matching both stores use: Unicode's full lower-case mapping
/// of every scalar, without any language's rules, plus the context rule for Greek capital sigma (a final
/// `Σ` becomes `ς`). This is what ICU's root locale does, and so what PostgreSQL's `lower()` and `ILIKE` do
/// under the collation `und-x-icu`, whatever the database's own locale is.
///
/// So `İ` (U+0130) lower-cases to `i` followed by U+0307, and matches only text that has a dotted capital
/// `İ` or that same pair; `ẞ` matches `ß`; no language-specific folding (Turkish dotless `ı`) applies.
///
/// The mapping is that of one Unicode version, as the server's ICU has it: a scalar assigned in a later
/// version (which that ICU does not know) is left as it is and is neither cased nor case-ignorable. Swift's
/// own tables are newer than most servers' ICU (Swift 6.3: Unicode 17; Debian 12's ICU 72: Unicode 15.0), so
/// without the version, letters such as U+A7CB (Unicode 16) folded in memory and not on the server.
package struct CaseFolding: Sendable {
    /// The Unicode version whose case mapping applies.
    package let unicodeVersion: Unicode.Version

    /// The mapping of one Unicode version (at most the version of Swift's own tables).
    package init(unicodeVersion: Unicode.Version) {
        self.unicodeVersion = unicodeVersion
    }

    /// The mapping of ``defaultUnicodeVersion``.
    package static let `default` = CaseFolding(unicodeVersion: defaultUnicodeVersion)

    /// Unicode 15.0: that of ICU 72, PostgreSQL's ICU on Debian 12 (PostgreSQL 15), which the tests run
    /// against. ICU 73 and 74 (Unicode 15.0, 15.1) lower-case the same letters.
    package static let defaultUnicodeVersion: Unicode.Version = (15, 0)

    /// The lower-cased scalars of `text`, with the mapping of ``defaultUnicodeVersion``.
    package static func lowercased(_ text: String) -> [Unicode.Scalar] {
        CaseFolding.default.lowercased(text)
    }

    /// The lower-cased scalars of `text`.
    package func lowercased(_ text: String) -> [Unicode.Scalar] {
        let scalars = Array(text.unicodeScalars)
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(scalars.count)
        for (index, scalar) in scalars.enumerated() {
            if scalar.isASCII {
                let value = scalar.value
                result.append(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(value + 0x20) ?? scalar : scalar)
            } else if scalar == "\u{03A3}" {
                result.append(isFinalSigma(scalars, at: index) ? "\u{03C2}" : "\u{03C3}")
            } else if knows(scalar) {
                result.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return result
    }

    /// Whether the scalar was assigned by ``unicodeVersion`` (unassigned scalars have no age).
    package func knows(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return false }
        return (age.major, age.minor) <= (unicodeVersion.major, unicodeVersion.minor)
    }

    /// Unicode's Final_Sigma condition, as ICU tests it: a cased letter before (skipping case-ignorable
    /// scalars) and none after.
    private func isFinalSigma(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        casedLetter(scalars, from: index - 1, step: -1) && !casedLetter(scalars, from: index + 1, step: 1)
    }

    /// Whether the first scalar from `start` in direction `step` that is not case-ignorable is cased. As in
    /// ICU, case-ignorable is tested first: a scalar that is both (U+0345, U+02B0) is skipped. A scalar this
    /// version does not know is neither.
    private func casedLetter(_ scalars: [Unicode.Scalar], from start: Int, step: Int) -> Bool {
        var position = start
        while position >= 0, position < scalars.count {
            let scalar = scalars[position]
            let known = knows(scalar)
            if (known && scalar.properties.isCaseIgnorable) || scalar == "\u{0307}" {
                position += step
                continue
            }
            return known && scalar.properties.isCased
        }
        return false
    }
}
