import Foundation

/// A value that can write itself into a key of a ``ManagedObject``.
///
/// Every attribute type (`Int`, `String`, `Date`, ...), enums with a raw value, and ``BoxingStruct``s
/// conform. Boxing a struct does not call `box` for its known property types; conform your own types to
/// store them in an attribute.
public protocol Boxing {
    /// Writes `self` into `object` under `key`.
    ///
    /// - Throws: ``CVManagedStructError`` when the key or the type does not fit.
    func box(_ object: ManagedObject, withKey key: String) throws
}

/// A struct that boxes into a ``ManagedObject`` of the entity `EntityName`.
///
/// Boxing reflects the struct's stored properties in declaration order (a property named `objectID` is
/// skipped): attribute types and raw-value enums become attributes, nested structs to-one relationships,
/// arrays of structs ordered to-many relationships (stored in array order) and sets of structs unordered
/// ones. `nil` clears an attribute or relationship; an empty or `nil` collection unlinks every member
/// without deleting it, unless the relationship's delete rule is `cascade`: then the members are deleted.
/// (Dropping only some members of a collection unlinks them, whatever the rule.)
///
/// Boxing writes every property, relationships included: a nested struct whose back-reference is empty
/// (an article's `author.articles == []`) unlinks what was linked before, as in the original CoreValue.
/// Box a graph from one side, or leave the back-reference out of the nested struct.
public protocol BoxingStruct: Boxing {
    /// The name of the entity the struct boxes into.
    static var EntityName: String { get }

    /// Boxes the struct into an object of `context` (inserted, or found again for persistent and unique
    /// structs), or into an ephemeral object when `context` is `nil`.
    ///
    /// A value that cannot be boxed throws and leaves the context as it was.
    ///
    /// - Throws: ``CVManagedStructError`` naming the entity and field that did not fit.
    @discardableResult func toObject(_ context: ManagedObjectContext?) throws -> ManagedObject
}

/// A struct that remembers the stored row it came from (its `objectID`), so that boxing it again updates
/// that row instead of inserting a new one.
public protocol BoxingPersistentStruct: BoxingStruct {
    /// The ID of the stored row, or `nil` for a struct that was never saved.
    var objectID: ManagedObjectID? { get set }

    /// Boxes the struct, saves the context, and writes the saved object's ID to `objectID`.
    ///
    /// - Throws: ``CVManagedStructError/structUpdateError(message:)`` when `objectID` names no stored row
    ///   (nothing is inserted), or what boxing and saving throw.
    @discardableResult mutating func mutatingToObject(_ context: ManagedObjectContext?) throws -> ManagedObject

    /// Deletes the stored row, saves, and sets `objectID` to `nil`. Returns `false` (and does nothing)
    /// when there is no context or no `objectID`.
    ///
    /// - Throws: ``CVManagedStructError/structDeleteError(message:)`` when the row cannot be found or the
    ///   delete cannot be saved.
    @discardableResult mutating func delete(_ context: ManagedObjectContext?) throws -> Bool

    /// Saves the struct: ``defaultSave(_:)`` unless you override it to save nested collections first.
    ///
    /// - Throws: What ``mutatingToObject(_:)`` throws.
    mutating func save(_ context: ManagedObjectContext) throws
}

/// A struct identified by one unique attribute (`IdentifierName`): boxing finds the object with the same
/// identifier (registered in the context, else stored) and updates it, or inserts one.
public protocol BoxingUniqueStruct: BoxingStruct {
    /// The name of the identifying attribute, for example `"id"`.
    static var IdentifierName: String { get }

    /// The struct's identifier value, for example `self.id`.
    func IdentifierValue() -> IdentifierType

    /// Deletes the object with this identifier and saves.
    ///
    /// - Throws: ``CVManagedStructError/structDeleteError(message:)`` when there is no such object or the
    ///   delete cannot be saved.
    func delete(_ context: ManagedObjectContext?) throws

    /// Saves the struct: ``defaultSave(_:)`` unless you override it.
    ///
    /// - Throws: What boxing and saving throw.
    func save(_ context: ManagedObjectContext) throws
}

/// A type that identifies a ``BoxingUniqueStruct``: `String`, `Int`, `Int16`, `Int32`, `Int64`, `UUID`.
public protocol IdentifierType: AttributeValueConvertible {
    /// The predicate `name == self`, typed (no format string).
    func predicate(_ identifierName: String) -> CVPredicate
}

extension IdentifierType {
    /// The predicate `name == self`.
    public func predicate(_ identifierName: String) -> CVPredicate {
        .comparison(key: identifierName, .equal, attributeValue)
    }
}

extension String: IdentifierType {}
extension Int: IdentifierType {}
extension Int16: IdentifierType {}
extension Int32: IdentifierType {}
extension Int64: IdentifierType {}
extension UUID: IdentifierType {}
extension URL: IdentifierType {}

/// The seed's composition of boxing and unboxing.
public typealias _CVManagedStruct = BoxingStruct & UnboxingStruct

/// A struct that boxes into and unboxes from managed objects.
public protocol CVManagedStruct: _CVManagedStruct {
    /// The unboxed type: the struct itself.
    associatedtype StructureType = Self
}

/// The seed's composition of persistent boxing and unboxing.
public typealias _CVManagedPersistentStruct = BoxingPersistentStruct & UnboxingStruct

/// A struct that remembers its stored row and unboxes from managed objects.
public protocol CVManagedPersistentStruct: _CVManagedPersistentStruct {
    /// The unboxed type: the struct itself.
    associatedtype StructureType = Self
}

/// The seed's composition of unique boxing and unboxing.
public typealias _CVManagedUniqueStruct = BoxingUniqueStruct & UnboxingStruct

/// A struct identified by a unique attribute that unboxes from managed objects.
public protocol CVManagedUniqueStruct: _CVManagedUniqueStruct {
    /// The unboxed type: the struct itself.
    associatedtype StructureType = Self
}
