@_spi(StoreImplementation) import CoreValue

/// Entity inheritance on PostgreSQL: one table per hierarchy, as Core Data's SQLite store keeps it.
///
/// A hierarchy's rows live in its root's table, which has a text column ``entityColumn`` naming each row's
/// entity and a column for every attribute and owning to-one of every entity in the hierarchy. A chain of
/// parents declares each key once; siblings or cousins that each declare an attribute of one name and type
/// share its one column (the model refuses other repeats, and unique ones). The columns of the root's own attributes keep their
/// nullability; a subentity's are nullable, since the other entities' rows hold nothing there, and the
/// change set check keeps them required for that subentity's rows. One table means one identity sequence,
/// so a key names one row across the hierarchy: a foreign key or join table to any entity of it references
/// the root's table, which is how a relationship to a parent (or an abstract entity) holds any subentity's
/// rows, and a UNIQUE column is unique across the hierarchy. A model without inheritance maps as before:
/// no entity column, no filter.
extension SchemaMapping {
    /// The column of a hierarchy's table that names each row's entity.
    package static let entityColumn = "_entity"

    /// The table an entity's rows are kept in: its hierarchy root's (its own without inheritance).
    package func tableName(of entityName: String) -> String {
        model.rootEntity(of: entityName)
    }

    /// Whether an entity's rows share a table with other entities' (it has a parent or subentities): its
    /// rows carry ``entityColumn`` and reads of it filter on that column.
    package func isHierarchical(_ entityName: String) -> Bool {
        model.isInHierarchy(entityName)
    }

    /// The join table that keeps an owning to-many relationship of `entity`: named after the entity that
    /// declares it, so every entity that inherits the relationship shares one.
    package func joinTableName(of relationship: Relationship, in entity: Entity) -> String {
        Self.joinTableName(
            entity: model.declaringEntity(of: relationship.name, in: entity.name), relationship: relationship.name)
    }

    /// The entities whose rows a root's table holds: the root, then every entity below it in model order.
    func tableMembers(of root: Entity) -> [Entity] {
        guard isHierarchical(root.name) else { return [root] }
        return [root] + model.entities.filter { $0.name != root.name && model.isEntity($0.name, kindOf: root.name) }
    }

    /// The properties each member of a root's table adds to it: all of the root's, a subentity's own.
    func ownProperties(of member: Entity, root: Entity) -> (attributes: [Attribute], relationships: [Relationship]) {
        member.name == root.name
            ? (member.attributes, member.relationships)
            : (Array(member.declaredAttributes), Array(member.declaredRelationships))
    }
}
