/// A validated set of entities: the schema that contexts and stores share.
///
/// ```swift
/// let model = try ManagedObjectModel {
///     Entity("Employee") {
///         Attribute("id", .int64, unique: true)
///         Attribute("name", .string)
///         Relationship("company", to: "Company", inverse: "employees")
///     }
///     Entity("Company") {
///         Attribute("name", .string, unique: true)
///         Relationship("employees", to: "Employee", .orderedToMany, inverse: "company")
///     }
/// }
/// ```
///
/// Building a model validates it: duplicate entity or key names, reserved names, unknown destinations and
/// inverses that do not point back, unknown parents, inheritance cycles and keys a subentity declares again
/// throw ``CVManagedStructError/invalidModel(entity:key:message:)``. It also resolves inheritance: each
/// entity in ``entities`` has its parent chain's attributes and relationships before its own.
public struct ManagedObjectModel: Sendable, Hashable {
    /// The entities, in declaration order, with inherited properties resolved.
    public let entities: [Entity]
    private let index: [String: Int]
    /// Each entity's place in its hierarchy, by name (see ``Lineage``).
    let lineages: [String: Lineage]
    /// Whether any entity has a parent: `false` answers ``isInHierarchy(_:)`` without a lookup by name.
    let hasHierarchies: Bool

    /// Keys no attribute or relationship may use: `objectID` is the struct's identity, and names starting
    /// with an underscore are kept for the store's own columns.
    public static func isReservedKey(_ key: String) -> Bool {
        key == "objectID" || key.hasPrefix("_")
    }

    /// The model with no entities.
    public static let empty = ManagedObjectModel(validEntities: [], index: [:])

    private init(validEntities: [Entity], index: [String: Int]) {
        self.entities = validEntities
        self.index = index
        self.lineages = [:]
        self.hasHierarchies = false
    }

    /// Creates and validates a model.
    ///
    /// - Throws: ``CVManagedStructError/invalidModel(entity:key:message:)`` naming the entity and key at fault.
    public init(_ entities: [Entity]) throws {
        var index: [String: Int] = [:]
        for (position, entity) in entities.enumerated() {
            guard !entity.name.isEmpty else {
                throw CVManagedStructError.invalidModel(entity: entity.name, key: nil, message: "empty entity name")
            }
            guard index[entity.name] == nil else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: nil, message: "duplicate entity name")
            }
            index[entity.name] = position
        }
        let resolved = try Self.resolveInheritance(entities, index: index)
        self.entities = resolved
        self.index = index
        self.lineages = Self.lineages(resolved, index: index)
        self.hasHierarchies = resolved.contains { $0.parent != nil }
        for entity in resolved { try validate(entity) }
    }

    /// Creates and validates a model from a list of entities.
    ///
    /// - Throws: ``CVManagedStructError/invalidModel(entity:key:message:)`` naming the entity and key at fault.
    public init(@ModelBuilder _ entities: () -> [Entity]) throws {
        try self.init(entities())
    }

    /// The entity with this name, if any.
    public func entity(named name: String) -> Entity? {
        index[name].map { entities[$0] }
    }

    /// The entity with this name.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)`` if the model has none.
    public func entity(_ name: String) throws -> Entity {
        guard let entity = entity(named: name) else { throw CVManagedStructError.unknownEntity(name) }
        return entity
    }

    /// The inverse of a relationship, if it declares one.
    public func inverse(of relationship: Relationship) -> (entity: Entity, relationship: Relationship)? {
        guard let inverseName = relationship.inverse, let destination = entity(named: relationship.destination),
            let inverse = destination.relationship(named: inverseName)
        else { return nil }
        return (destination, inverse)
    }

    /// Checks the properties the entity declares (inherited ones were checked on the entity that declares
    /// them, and ``resolveInheritance(_:index:)`` refused a key declared again).
    private func validate(_ entity: Entity) throws {
        var keys = Set<String>()
        func check(_ key: String) throws {
            guard !key.isEmpty else {
                throw CVManagedStructError.invalidModel(entity: entity.name, key: key, message: "empty key")
            }
            guard !Self.isReservedKey(key) else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: key, message: "reserved name (objectID, or starting with '_')")
            }
            guard keys.insert(key).inserted else {
                throw CVManagedStructError.invalidModel(entity: entity.name, key: key, message: "duplicate key")
            }
        }
        for attribute in entity.declaredAttributes {
            try check(attribute.name)
            if let value = attribute.defaultValue, let type = value.type, type != attribute.type {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: attribute.name,
                    message: "default value of type \(type) for an attribute of type \(attribute.type)")
            }
            if let value = attribute.defaultValue, value.isNull, !attribute.isOptional {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: attribute.name, message: "null default for a required attribute")
            }
        }
        for relationship in entity.declaredRelationships {
            try check(relationship.name)
            guard let destination = self.entity(named: relationship.destination) else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: relationship.name,
                    message: "unknown destination entity '\(relationship.destination)'")
            }
            guard let inverseName = relationship.inverse else { continue }
            guard let inverse = destination.relationship(named: inverseName) else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: relationship.name,
                    message: "inverse '\(inverseName)' is not a relationship of '\(destination.name)'")
            }
            guard inverse.destination == entity.name, inverse.inverse == relationship.name else {
                throw CVManagedStructError.invalidModel(
                    entity: entity.name, key: relationship.name,
                    message: "inverse '\(destination.name).\(inverseName)' does not point back to this relationship")
            }
        }
    }
}

/// Builds the entity list of a ``ManagedObjectModel``.
@resultBuilder
public enum ModelBuilder {
    /// Turns an entity into a list.
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    /// Joins the entities of a block.
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    /// Supports `if` without `else`.
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    /// Supports `if`/`else`, first branch.
    public static func buildEither(first part: [Entity]) -> [Entity] { part }
    /// Supports `if`/`else`, second branch.
    public static func buildEither(second part: [Entity]) -> [Entity] { part }
    /// Supports `for` loops.
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
}
