import Foundation

/// Dictionaries over a model's entities, keys, relationships and inverses, built once per context or store so
/// that every lookup on a hot path is a hash lookup instead of a scan.
package final class ModelIndex: Sendable {
    /// The model indexed.
    package let model: ManagedObjectModel
    /// The entities by name.
    package let entities: [String: EntityIndex]
    /// Whether any entity has a parent: `false` keeps a model without inheritance off every hierarchy path.
    package let hasHierarchies: Bool
    /// The boxing plans built against this index, for every context that shares it (see
    /// ``ModelIndexSharing``).
    package let plans = SharedPlans()

    /// Indexes a model.
    package init(_ model: ManagedObjectModel) {
        self.model = model
        var entities: [String: EntityIndex] = [:]
        for entity in model.entities {
            entities[entity.name] = EntityIndex(entity, in: model)
        }
        self.entities = entities
        self.hasHierarchies = model.entities.contains { $0.parent != nil }
    }

    /// The entity with this name.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``.
    package func entity(_ name: String) throws -> EntityIndex {
        guard let entity = entities[name] else { throw CVManagedStructError.unknownEntity(name) }
        return entity
    }
}

/// A store that indexes its model once: the contexts over it share that index, and with it the boxing plans
/// each struct type needs (``ModelIndex/plans``), so a context made per request does not build them again.
package protocol ModelIndexSharing: AnyObject {
    /// The store's index of its own model.
    var sharedIndex: ModelIndex { get }
    /// The store's refinements (``Store/refinements``): found with the index by one dynamic cast per context,
    /// not two.
    var sharedRefinements: any StoreRefinements { get }
}

extension ModelIndexSharing where Self: StoreRefinements {
    /// The store itself.
    package var sharedRefinements: any StoreRefinements { self }
}

/// Boxing plans (``LayoutCache``'s key-path plans, or its marker for a type without one) by struct type,
/// shared by the contexts of one ``ModelIndex``. A plan is immutable once built and refers only to that
/// index's entities; a context keeps the plans it used in its own cache and comes here only on a miss.
package final class SharedPlans: Sendable {
    /// Each plan is immutable once built (see above): what ``LockedTable`` asks of its values.
    private let plans = LockedTable<ObjectIdentifier, AnyObject>()

    /// The plan built for a type, if any context built one.
    package func plan(for type: ObjectIdentifier) -> AnyObject? {
        plans[type]
    }

    /// Keeps a plan for the other contexts; the first one kept for a type stays.
    package func keep(_ plan: AnyObject, for type: ObjectIdentifier) {
        _ = plans.keep(plan, for: type)
    }
}

/// One entity's keys, relationships and inverses, by name. A class: every object and
/// record refers to its entity's index, so sharing one reference costs one retain rather than a copy of all of it.
package final class EntityIndex: Sendable {
    /// The entity.
    package let entity: Entity
    /// The attributes by name.
    package let attributes: [String: Attribute]
    /// The relationships by name.
    package let relationships: [String: Relationship]
    /// The inverse of each relationship that declares one.
    package let inverses: [String: Relationship]
    /// The attributes marked unique, in declaration order.
    package let uniqueAttributes: [Attribute]
    /// The attributes' names and positions (declaration order): the layout of every object of the entity.
    package let layout: AttributeLayout
    /// Whether the attribute at each position of ``layout`` is unique.
    package let isUnique: [Bool]
    /// The type of the attribute at each position of ``layout``, and whether it is optional: what a check of
    /// every value reads, without copying each attribute (its name, its default) per value.
    package let types: [AttributeType]
    package let isOptional: [Bool]
    /// The positions of the unique attributes in ``layout``.
    package let uniquePositions: [Int]
    /// A number for the entity's name, the same in every index of the process: a context's unique index keys
    /// its entries by it instead of by the name.
    let number: Int32
    /// Every attribute with its default value (`.null` when it has none): what a new object starts with.
    package let defaultAttributes: AttributeValues
    /// The root of the entity's hierarchy (its own name without a parent): keys and unique values are
    /// shared by a hierarchy, so stores and the context key them by it.
    package let root: String
    /// The entities whose objects are this one's (``ManagedObjectModel/concreteEntities(of:)``).
    package let kinds: [String]
    /// Whether the entity has a parent or subentities: `false` keeps every hierarchy check off the paths of a
    /// model without inheritance.
    package let isInHierarchy: Bool
    /// For each relationship whose destination has subentities, the entities whose objects it may hold.
    let destinationKinds: [String: Set<String>]

    /// The entity's name.
    package var name: String { entity.name }

    init(_ entity: Entity, in model: ManagedObjectModel) {
        self.entity = entity
        var attributes: [String: Attribute] = [:]
        for attribute in entity.attributes { attributes[attribute.name] = attribute }
        var relationships: [String: Relationship] = [:]
        var inverses: [String: Relationship] = [:]
        for relationship in entity.relationships {
            relationships[relationship.name] = relationship
            if let inverse = model.inverse(of: relationship) { inverses[relationship.name] = inverse.relationship }
        }
        self.attributes = attributes
        self.relationships = relationships
        self.inverses = inverses
        self.uniqueAttributes = entity.uniqueAttributes
        self.isUnique = entity.attributes.map(\.isUnique)
        self.types = entity.attributes.map(\.type)
        self.isOptional = entity.attributes.map(\.isOptional)
        self.uniquePositions = entity.attributes.indices.filter { entity.attributes[$0].isUnique }
        self.number = Self.slot(entity.name)
        let layout = AttributeLayout.shared(entity)
        self.layout = layout
        self.defaultAttributes = AttributeValues(
            layout: layout, values: entity.attributes.map { $0.defaultValue ?? .null })
        self.root = model.rootEntity(of: entity.name)
        self.kinds = model.concreteEntities(of: entity.name)
        self.isInHierarchy = model.isInHierarchy(entity.name)
        var destinationKinds: [String: Set<String>] = [:]
        for relationship in entity.relationships where model.hasSubentities(relationship.destination) {
            destinationKinds[relationship.name] = Set(
                model.entities.filter { model.isEntity($0.name, kindOf: relationship.destination) }.map(\.name))
        }
        self.destinationKinds = destinationKinds
    }

    // One entry per entity name a process builds a model with, numbered in the order first seen; never
    // emptied, so that an entity keeps its slot across models. Bounded as the interned layouts are (see
    // `AttributeLayout`).
    private static let slots = LockedTable<String, Int32>()

    private static func slot(_ name: String) -> Int32 {
        slots.value(for: name) { count in Int32(truncatingIfNeeded: count) }
    }

    /// Whether objects of `entityName` may be held by `relationship` of this entity: whether it is a
    /// subentity of the relationship's destination (a model without inheritance never has one).
    package func isDestination(_ relationship: Relationship, kindOf entityName: String) -> Bool {
        destinationKinds[relationship.name]?.contains(entityName) ?? false
    }

    /// Whether `relationship`'s destination has subentities (always `false` without inheritance, at the cost
    /// of one check for emptiness).
    package func linksSubentities(_ relationship: Relationship) -> Bool {
        !destinationKinds.isEmpty && destinationKinds[relationship.name] != nil
    }

    /// The position of the attribute `key` in ``layout``.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``.
    package func position(_ key: String) throws -> Int {
        guard let position = layout.position(of: key) else {
            throw CVManagedStructError.unknownKey(entity: name, key: key)
        }
        return position
    }

    /// ``position(_:)`` for a key that is usually one of the entity's few unique attributes (a unique
    /// struct's identifier): compared with their names before the name is hashed for the layout's table.
    package func uniquePosition(_ key: String) throws -> Int {
        let names = layout.names
        if let position = uniquePositions.first(where: { names[$0] == key }) { return position }
        return try position(key)
    }

    /// The attribute with this name.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``.
    package func attribute(_ key: String) throws -> Attribute {
        guard let attribute = attributes[key] else { throw CVManagedStructError.unknownKey(entity: name, key: key) }
        return attribute
    }

    /// The relationship with this name.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``.
    package func relationship(_ key: String) throws -> Relationship {
        guard let relationship = relationships[key] else {
            throw CVManagedStructError.unknownKey(entity: name, key: key)
        }
        return relationship
    }
}
