/// An attribute value compared the way PostgreSQL compares it: strings by their exact UTF-8 bytes.
///
/// Swift's `String ==` is Unicode canonical equivalence ("\u{E9}" equals "e\u{301}"), while a `text` column
/// and its UNIQUE constraint compare bytes. Dictionaries of unique identifiers key by this type so that
/// identifiers the database keeps apart stay apart in memory too.
package enum ExactValue: Hashable, Sendable {
    case text([UInt8])
    case other(AttributeValue)

    /// The exact key of a value.
    package init(_ value: AttributeValue) {
        if case .string(let string) = value {
            self = .text(Array(string.utf8))
        } else {
            self = .other(value)
        }
    }
}
