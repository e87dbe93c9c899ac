import Foundation

/// The entities of struct types derived from their own stored properties: what `toObject(nil)` boxes into.
///
/// An ephemeral object (boxed without a context) needs an entity, but no model is at hand. Rather than a
/// process-wide registry of models (whose answer would depend on which contexts were made before, and on
/// which of two models declaring the same entity name registered last), each `toObject(nil)` derives the
/// entities from the struct types it boxes: attribute types and raw-value enums become attributes (optional
/// when the property is), a nested struct a to-one relationship, an array of structs an ordered to-many and a
/// `Set` an unordered one; a unique struct's identifier is unique. Nested types are walked with a work list,
/// not recursion. Inverses are not derived: an ephemeral object maintains none.
enum DerivedModel {
    /// The index of the entities of `types` and of every struct type nested in them.
    ///
    /// - Throws: ``CVManagedStructError/structConversionError(message:)`` for a type whose stored properties
    ///   cannot be listed, ``CVManagedStructError/structValueError(message:)`` for a property whose type has
    ///   no derivable storage (a custom `Boxing` type: box it with a context), and
    ///   ``CVManagedStructError/invalidModel(entity:key:message:)`` when two struct types of one entity give a
    ///   property different types.
    static func index(for types: [any BoxingStruct.Type]) throws -> ModelIndex {
        var entities: [String: Entity] = [:]
        var order: [String] = []
        var queue = types
        var seen = Set<ObjectIdentifier>()
        while let type = queue.popLast() {
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            let name = type.EntityName
            var entity = entities[name] ?? Entity(name)
            if entities[name] == nil { order.append(name) }
            let identifier = (type as? any BoxingUniqueStruct.Type)?.IdentifierName
            for (label, valueType) in try fields(of: type) where label != "objectID" {
                switch shape(of: valueType) {
                case .attribute(let attributeType, let optional):
                    let attribute = Attribute(label, attributeType, optional: optional, unique: label == identifier)
                    try add(attribute, to: &entity)
                case .toOne(let destination):
                    try add(Relationship(label, to: destination.EntityName), to: &entity)
                    queue.append(destination)
                case .toMany(let destination, let ordered):
                    let kind: Relationship.Kind = ordered ? .orderedToMany : .unorderedToMany
                    try add(Relationship(label, to: destination.EntityName, kind), to: &entity)
                    queue.append(destination)
                case .unsupported:
                    throw CVManagedStructError.structValueError(
                        message: "Could not box field '\(label)' of \(name) without a context: the storage of "
                            + "\(valueType) cannot be derived from the struct; box it into a context instead")
                }
            }
            entities[name] = entity
        }
        return ModelIndex(try ManagedObjectModel(order.compactMap { entities[$0] }))
    }

    /// How a stored property's declared type is stored.
    private enum Shape {
        case attribute(AttributeType, optional: Bool)
        case toOne(any BoxingStruct.Type)
        case toMany(any BoxingStruct.Type, ordered: Bool)
        case unsupported
    }

    private static func shape(of declared: Any.Type) -> Shape {
        var type = declared
        var optional = false
        if let wrapper = type as? any _OptionalBoxing.Type {
            type = wrapper._wrappedType
            optional = true
        }
        if let convertible = type as? any AttributeValueConvertible.Type {
            return .attribute(convertible.attributeType, optional: optional)
        }
        if type is NSDecimalNumber.Type { return .attribute(.decimal, optional: optional) }
        if let raw = type as? any RawRepresentable.Type,
            let convertible = rawValueType(of: raw) as? any AttributeValueConvertible.Type
        {
            return .attribute(convertible.attributeType, optional: optional)
        }
        if let nested = type as? any BoxingStruct.Type { return .toOne(nested) }
        if let collection = type as? any _BoxingCollection.Type,
            let element = collection._boxingElementType as? any BoxingStruct.Type
        {
            return .toMany(element, ordered: collection._isOrderedBoxingCollection)
        }
        return .unsupported
    }

    private static func rawValueType<R: RawRepresentable>(of _: R.Type) -> Any.Type { R.RawValue.self }

    /// The stored properties of a struct type with their declared types.
    private static func fields(of type: any BoxingStruct.Type) throws -> [(String, Any.Type)] {
        func listed<T: BoxingStruct>(_ type: T.Type) -> [(String, Any.Type)]? {
            StructFields.keyPaths(of: type).map { fields in
                fields.map { ($0.name, Swift.type(of: $0.keyPath).valueType) }
            }
        }
        guard let fields = listed(type) else {
            throw CVManagedStructError.structConversionError(
                message: "\(type) is not a struct whose stored properties can be listed; box it into a context")
        }
        return fields
    }

    private static func add(_ attribute: Attribute, to entity: inout Entity) throws {
        if let existing = entity.attributes.first(where: { $0.name == attribute.name }) {
            guard existing.type == attribute.type else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: attribute.name,
                    message: "two struct types of this entity store it as \(existing.type.rawValue) and "
                        + "\(attribute.type.rawValue)")
            }
            return
        }
        entity.attributes.append(attribute)
    }

    private static func add(_ relationship: Relationship, to entity: inout Entity) throws {
        if let existing = entity.relationships.first(where: { $0.name == relationship.name }) {
            guard existing.destination == relationship.destination, existing.kind == relationship.kind else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: relationship.name,
                    message: "two struct types of this entity relate it differently")
            }
            return
        }
        entity.relationships.append(relationship)
    }
}
