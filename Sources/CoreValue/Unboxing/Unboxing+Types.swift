import Foundation

extension Int: Unboxing, Boxing {}
extension Int16: Unboxing, Boxing {}
extension Int32: Unboxing, Boxing {}
extension Int64: Unboxing, Boxing {}
extension Double: Unboxing, Boxing {}
extension Float: Unboxing, Boxing {}
extension Bool: Unboxing, Boxing {}
extension String: Unboxing, Boxing {}
extension Data: Unboxing, Boxing {}
extension Date: Unboxing, Boxing {}
extension Decimal: Unboxing, Boxing {}
extension UUID: Unboxing, Boxing {}
extension URL: Unboxing, Boxing {}

extension NSDecimalNumber: Unboxing, Boxing {
    /// The unboxed type.
    public typealias StructureType = NSDecimalNumber

    /// Reads a `decimal` (or integer) attribute.
    ///
    /// - Throws: An unboxing error for another type.
    public static func unbox(_ value: ManagedValue) throws -> NSDecimalNumber {
        guard case .attribute(let attribute) = value, let decimal = Decimal(attributeValue: attribute) else {
            throw NSError(unboxErrorMessage: "expected NSDecimalNumber, found \(value.kindDescription)")
        }
        return NSDecimalNumber(decimal: decimal)
    }

    /// Writes the number into a `decimal` attribute.
    ///
    /// - Throws: ``CVManagedStructError`` for an unknown key or a type that does not fit.
    public func box(_ object: ManagedObject, withKey key: String) throws {
        try object.setValue(AttributeValue.decimal(decimalValue), forKey: key)
    }
}

extension ManagedObject: Unboxing, Boxing {
    /// The unboxed type.
    public typealias StructureType = ManagedObject

    /// Reads a related object as is.
    ///
    /// - Throws: An unboxing error when the value is no object.
    public static func unbox(_ value: ManagedValue) throws -> ManagedObject {
        guard case .object(let object) = value else {
            throw NSError(unboxErrorMessage: "expected an object, found \(value.kindDescription)")
        }
        return object
    }

    /// Links this object from `object` under the to-one relationship `key`.
    ///
    /// - Throws: ``CVManagedStructError`` when `key` is no to-one relationship to this entity.
    public func box(_ object: ManagedObject, withKey key: String) throws {
        try object.setObject(self, forKey: key)
    }
}

extension ManagedObjectID: Unboxing {
    /// Reads the object's ID (the key `objectID`).
    ///
    /// - Throws: An unboxing error for any other value.
    public static func unbox(_ value: ManagedValue) throws -> ManagedObjectID {
        guard case .objectID(let id) = value else {
            throw NSError(unboxErrorMessage: "expected an object ID, found \(value.kindDescription)")
        }
        return id
    }
}
