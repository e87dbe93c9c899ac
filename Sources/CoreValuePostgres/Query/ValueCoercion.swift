@_spi(StoreImplementation) import CoreValue

/// Converts values to the type of the column they are compared with or stored in, without loss.
enum ValueCoercion {
    /// The value as the attribute's type; `.null` stays `.null`.
    ///
    /// - Throws: `CVManagedStructError.typeMismatch` when the value does not fit the type without loss;
    ///   ``PostgresStoreError/Code/invalidValue`` for a value PostgreSQL cannot keep (``StorableValues``).
    static func coerce(_ value: AttributeValue, to attribute: Attribute, in entity: String) throws -> AttributeValue {
        try checkStorable(value, entity: entity, key: attribute.name)
        // The one lossless conversion every store uses (AttributeValue.converted(to:)); `.null` stays `.null`.
        if let converted = value.converted(to: attribute.type) { return converted }
        throw CVManagedStructError.typeMismatch(
            entity: entity, key: attribute.name, expected: attribute.type.rawValue, found: value.typeDescription)
    }

    /// Throws ``PostgresStoreError/Code/invalidValue`` when PostgreSQL cannot keep the value (``StorableValues``).
    static func checkStorable(
        _ value: AttributeValue, entity: @autoclosure () -> String, key: @autoclosure () -> String
    ) throws {
        guard let problem = StorableValues.problem(value) else { return }
        throw PostgresStoreError(.invalidValue, "'\(entity()).\(key())': \(problem)")
    }
}
