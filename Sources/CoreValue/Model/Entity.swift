/// An entity: a named record type with attributes and relationships, stored as one table.
///
/// ```swift
/// Entity("Company") {
///     Attribute("name", .string, unique: true)
///     Relationship("employees", to: "Employee", .orderedToMany, inverse: "company")
/// }
/// ```
public struct Entity: Sendable, Hashable {
    /// The entity's name, the `EntityName` of the structs that box into it.
    public var name: String
    /// The attributes, in declaration order.
    public var attributes: [Attribute]
    /// The relationships, in declaration order.
    public var relationships: [Relationship]

    /// Creates an entity from its properties.
    public init(_ name: String, attributes: [Attribute] = [], relationships: [Relationship] = []) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
    }

    /// Creates an entity from a list of attributes and relationships.
    public init(_ name: String, @EntityBuilder _ properties: () -> [EntityProperty]) {
        self.name = name
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
