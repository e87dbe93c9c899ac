/// An attribute value compared the way PostgreSQL compares it: strings by their exact UTF-8 bytes.
///
/// Swift's `String ==` is Unicode canonical equivalence ("\u{E9}" equals "e\u{301}"), while a `text` column
/// and its UNIQUE constraint compare bytes. Dictionaries of unique identifiers key by this type so that
/// identifiers the database keeps apart stay apart in memory too. Text is hashed and compared in place, with
/// no copy of its bytes.
package struct ExactValue: Hashable, Sendable {
    /// The value.
    package let value: AttributeValue

    /// The exact key of a value.
    package init(_ value: AttributeValue) {
        self.value = value
    }

    package static func == (lhs: ExactValue, rhs: ExactValue) -> Bool {
        switch (lhs.value, rhs.value) {
        case (.string(let left), .string(let right)): return AttributeValue.sameUTF8(left, right)
        case (.string, _), (_, .string): return false
        default: return lhs.value == rhs.value
        }
    }

    package func hash(into hasher: inout Hasher) {
        guard case .string(let text) = value else {
            hasher.combine(value)
            return
        }
        hasher.combine(text.utf8.count)
        Unchecked.hashUTF8(text, into: &hasher)
    }
}
