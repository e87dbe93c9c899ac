import CoreValue
import Foundation

/// Converts values to the type of the column they are compared with or stored in, without loss.
enum ValueCoercion {
    /// The value as the attribute's type; `.null` stays `.null`.
    ///
    /// - Throws: `CVManagedStructError.typeMismatch` when the value does not fit the type without loss;
    ///   ``PostgresStoreError/Code/invalidValue`` for text containing a NUL character.
    static func coerce(_ value: AttributeValue, to attribute: Attribute, in entity: String) throws -> AttributeValue {
        if case .string(let text) = value { try checkText(text, entity: entity, key: attribute.name) }
        if value.isNull || value.type == attribute.type { return value }
        if let converted = convert(value, to: attribute.type) { return converted }
        throw CVManagedStructError.typeMismatch(
            entity: entity, key: attribute.name, expected: attribute.type.rawValue,
            found: value.type?.rawValue ?? "null")
    }

    /// Throws when text cannot be stored in PostgreSQL (a NUL character).
    static func checkText(_ text: String, entity: String, key: String) throws {
        if text.utf8.contains(0) {
            throw PostgresStoreError(
                .invalidValue, "text for '\(entity).\(key)' contains a NUL character, which PostgreSQL text cannot hold"
            )
        }
    }

    private static func integer(_ value: AttributeValue) -> Int64? {
        switch value {
        case .int16(let number): return Int64(number)
        case .int32(let number): return Int64(number)
        case .int64(let number): return number
        default: return nil
        }
    }

    private static func convert(_ value: AttributeValue, to type: AttributeType) -> AttributeValue? {
        if let number = integer(value) {
            switch type {
            case .int16: return Int16(exactly: number).map(AttributeValue.int16)
            case .int32: return Int32(exactly: number).map(AttributeValue.int32)
            case .int64: return .int64(number)
            case .double: return Double(exactly: number).map(AttributeValue.double)
            case .float: return Float(exactly: number).map(AttributeValue.float)
            case .decimal: return .decimal(Decimal(number))
            default: return nil
            }
        }
        switch (value, type) {
        case (.float(let number), .double): return .double(Double(number))
        case (.double(let number), .float):
            return Float(exactly: number).map(AttributeValue.float)
        case (.double(let number), .decimal) where number.isFinite: return .decimal(Decimal(number))
        case (.float(let number), .decimal) where number.isFinite: return .decimal(Decimal(Double(number)))
        default: return nil
        }
    }
}
