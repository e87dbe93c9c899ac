/// An entity: a named record type with attributes and relationships.
///
/// ```swift
/// Entity("Company") {
///     Attribute("name", .string, unique: true)
///     Relationship("employees", to: "Employee", .orderedToMany, inverse: "company")
/// }
/// ```
///
/// An entity may inherit from a parent entity, as in Core Data: it has its parent chain's attributes and
/// relationships before its own, and a fetch of the parent returns its objects too. An abstract entity has
/// no objects of its own, only its subentities' (see <doc:Modelling#Inheritance>):
///
/// ```swift
/// Entity("Media", abstract: true) { Attribute("title", .string) }
/// Entity("Photo", parent: "Media") { Attribute("width", .int32) }
/// ```
public struct Entity: Sendable, Hashable {
    /// The entity's name, the `EntityName` of the structs that box into it.
    public var name: String
    /// The name of the entity this one inherits from, if any.
    public var parent: String?
    /// Whether the entity has no objects of its own: inserting one throws, its subentities' objects are its
    /// objects.
    public var isAbstract: Bool
    /// The attributes: in a model, the inherited ones first (root first), then the entity's own, each in
    /// declaration order.
    public var attributes: [Attribute]
    /// The relationships, ordered as ``attributes`` are.
    public var relationships: [Relationship]
    /// How many of ``attributes`` come from the parent chain. The model sets it when it resolves inheritance,
    /// so that resolving an already resolved entity again (a model built from another's entities) finds the
    /// entity's own properties.
    public internal(set) var inheritedAttributeCount = 0
    /// How many of ``relationships`` come from the parent chain.
    public internal(set) var inheritedRelationshipCount = 0

    /// Creates an entity from its properties.
    public init(
        _ name: String, parent: String? = nil, abstract: Bool = false, attributes: [Attribute] = [],
        relationships: [Relationship] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = abstract
        self.attributes = attributes
        self.relationships = relationships
    }

    /// Creates an entity from a list of attributes and relationships.
    public init(
        _ name: String, parent: String? = nil, abstract: Bool = false,
        @EntityBuilder _ properties: () -> [EntityProperty]
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = abstract
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        for property in properties() {
            switch property {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            }
        }
        self.attributes = attributes
        self.relationships = relationships
    }

    /// The attribute with this name, if any.
    public func attribute(named name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    /// The relationship with this name, if any.
    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }

    /// The attributes marked unique.
    public var uniqueAttributes: [Attribute] { attributes.filter(\.isUnique) }

    /// The attributes the entity declares itself, not inherited ones.
    public var declaredAttributes: ArraySlice<Attribute> { attributes.dropFirst(inheritedAttributeCount) }

    /// The relationships the entity declares itself, not inherited ones.
    public var declaredRelationships: ArraySlice<Relationship> {
        relationships.dropFirst(inheritedRelationshipCount)
    }
}

/// One property inside an ``Entity`` builder block.
public enum EntityProperty: Sendable, Hashable {
    /// An attribute.
    case attribute(Attribute)
    /// A relationship.
    case relationship(Relationship)
}

/// Builds the property list of an ``Entity``.
@resultBuilder
public enum EntityBuilder {
    /// Turns an attribute into a property.
    public static func buildExpression(_ attribute: Attribute) -> [EntityProperty] { [.attribute(attribute)] }
    /// Turns a relationship into a property.
    public static func buildExpression(_ relationship: Relationship) -> [EntityProperty] {
        [.relationship(relationship)]
    }
    /// Joins the properties of a block.
    public static func buildBlock(_ parts: [EntityProperty]...) -> [EntityProperty] { parts.flatMap { $0 } }
    /// Supports `if` without `else`.
    public static func buildOptional(_ part: [EntityProperty]?) -> [EntityProperty] { part ?? [] }
    /// Supports `if`/`else`, first branch.
    public static func buildEither(first part: [EntityProperty]) -> [EntityProperty] { part }
    /// Supports `if`/`else`, second branch.
    public static func buildEither(second part: [EntityProperty]) -> [EntityProperty] { part }
    /// Supports `for` loops.
    public static func buildArray(_ parts: [[EntityProperty]]) -> [EntityProperty] { parts.flatMap { $0 } }
}
