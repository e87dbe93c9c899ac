/// The values PostgreSQL cannot keep in an attribute's column, which both stores refuse as a change set is
/// resolved, before anything is written: `MemoryStore` as well, so that code tested against it does not meet
/// the refusal first in production (`PostgresStore` throws `PostgresStoreError.invalidValue`, `MemoryStore`
/// ``CVManagedStructError/Code/structValueError``, each naming the entity and key).
package enum StorableValues {
    /// Why `value` cannot be stored, or `nil` when it can.
    package static func problem(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let text):
            return containsNUL(text) ? "text contains a NUL character, which PostgreSQL text cannot hold" : nil
        case .decimal(let number):
            // PostgreSQL's numeric has a NaN, but the stores neither order nor read one: refused, as in a
            // `Decimal` computation gone wrong it usually is.
            return number.isNaN ? "a Decimal NaN cannot be stored (a numeric column keeps numbers only)" : nil
        default:
            return nil
        }
    }

    /// Whether `text` holds a NUL character (U+0000).
    package static func containsNUL(_ text: String) -> Bool {
        Unchecked.utf8(of: text, contains: 0)
    }
}
