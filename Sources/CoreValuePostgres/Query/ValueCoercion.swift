@_spi(StoreImplementation) import CoreValue

/// Converts values to the type of the column they are compared with or stored in, without loss.
enum ValueCoercion {
    /// The value as the attribute's type; `.null` stays `.null`.
    ///
    /// - Throws: `CVManagedStructError.typeMismatch` when the value does not fit the type without loss;
    ///   ``PostgresStoreError/Code/invalidValue`` for text containing a NUL character.
    static func coerce(_ value: AttributeValue, to attribute: Attribute, in entity: String) throws -> AttributeValue {
        if case .string(let text) = value { try checkText(text, entity: entity, key: attribute.name) }
        // The one lossless conversion every store uses (AttributeValue.converted(to:)); `.null` stays `.null`.
        if let converted = value.converted(to: attribute.type) { return converted }
        throw CVManagedStructError.typeMismatch(
            entity: entity, key: attribute.name, expected: attribute.type.rawValue, found: value.typeDescription)
    }

    /// Throws when text cannot be stored in PostgreSQL (a NUL character).
    static func checkText(_ text: String, entity: @autoclosure () -> String, key: @autoclosure () -> String) throws {
        // Over the contiguous bytes (a native string's, without copying): one tight loop, no index per byte.
        var text = text
        if text.withUTF8({ $0.contains(0) }) {
            throw PostgresStoreError(
                .invalidValue,
                "text for '\(entity()).\(key())' contains a NUL character, which PostgreSQL text cannot hold"
            )
        }
    }
}
