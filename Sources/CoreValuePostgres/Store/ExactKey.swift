import CoreValue

/// An attribute value compared the way PostgreSQL compares it: strings by their exact UTF-8 bytes.
///
/// Swift's `String ==` is Unicode canonical equivalence ("\u{E9}" equals "e\u{301}"), while a `text` column
/// and its UNIQUE constraint compare bytes. Keying upsert rows by `AttributeValue` would merge identifiers
/// the database keeps apart.
enum ExactKey: Hashable {
    case text([UInt8])
    case other(AttributeValue)

    init(_ value: AttributeValue) {
        if case .string(let string) = value {
            self = .text(Array(string.utf8))
        } else {
            self = .other(value)
        }
    }
}
