@_spi(StoreImplementation) import CoreValue

/// Where PostgreSQL keeps the links of one relationship; see ``SchemaMapping/storage(of:in:)``.
package enum RelationshipStorage: Sendable, Hashable {
    /// A to-one relationship stored as a foreign-key column of the source entity's table.
    case foreignKey
    /// A to-many relationship that owns a join table (owner = source, member = destination), with a position
    /// column when ordered.
    case joinTable
    /// A to-one relationship stored as the foreign key of its inverse, a to-one of the named entity.
    case inverseForeignKey(entity: String, relationship: String)
    /// A relationship read from the join table owned by its inverse, a to-many of the named entity.
    case inverseJoinTable(entity: String, relationship: String)

    /// Whether the links are written from this side (the store writes the owning side of each change).
    package var isOwner: Bool {
        switch self {
        case .foreignKey, .joinTable: return true
        case .inverseForeignKey, .inverseJoinTable: return false
        }
    }
}

extension SchemaMapping {
    /// Where PostgreSQL stores a relationship's links: this mapping's decision alone (CoreValue describes
    /// relationships; each store chooses how to keep them).
    ///
    /// Each link is stored once: a to-many relationship owns a join table unless its inverse is a to-many
    /// that is ordered while it is not, or that sorts first (`Entity.key` order) when both are unordered; a
    /// to-one relationship owns a foreign-key column unless its inverse is a to-many (then it reads that
    /// join table) or a to-one that sorts first. The exception: a many-to-many ordered on both sides (Core
    /// Data allows it) keeps each side's order on its own, so each side owns a join table of its own with its
    /// own positions, and a save writes both (a context changes both sides together).
    package func storage(of relationship: Relationship, in entity: Entity) -> RelationshipStorage {
        guard let (inverseEntity, inverse) = model.inverse(of: relationship) else {
            return relationship.isToMany ? .joinTable : .foreignKey
        }
        // By the declaring entity: every entity that inherits the relationship keeps it the same way.
        let declarer = model.declaringEntity(of: relationship.name, in: entity.name)
        let selfSortsFirst = (declarer, relationship.name) < (inverseEntity.name, inverse.name)
        switch (relationship.isToMany, inverse.isToMany) {
        case (true, false):
            return .joinTable
        case (false, true):
            return .inverseJoinTable(entity: inverseEntity.name, relationship: inverse.name)
        case (true, true):
            // The ordered side owns the join table (its position column lives there); between two unordered
            // sides, the one that sorts first; two ordered sides each own one (each keeps its own order).
            if relationship.kind == .orderedToMany, inverse.kind == .orderedToMany { return .joinTable }
            let selfOwns =
                relationship.kind == inverse.kind ? selfSortsFirst : relationship.kind == .orderedToMany
            return selfOwns ? .joinTable : .inverseJoinTable(entity: inverseEntity.name, relationship: inverse.name)
        case (false, false):
            return selfSortsFirst
                ? .foreignKey : .inverseForeignKey(entity: inverseEntity.name, relationship: inverse.name)
        }
    }
}
