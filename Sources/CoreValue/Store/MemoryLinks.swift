/// Where ``MemoryStore`` keeps each relationship's links: its own choice, as `SchemaMapping` makes
/// PostgreSQL's. The context describes relationships and sends every changed side; each store writes the
/// sides it keeps and derives the others.
///
/// A to-one side keeps a key in its row, a to-many side a list of keys per owner (an adjacency list). Of two
/// inverse sides one is kept: the to-many side of a one-to-many (its order lives there); of two to-many
/// sides the ordered one, or, when neither is, the one whose entity and name sort first; of two to-ones the
/// one that sorts first. A many-to-many ordered on both sides keeps both lists, each with its own order, and
/// writing one keeps the other holding the same pairs. These are the sides PostgreSQL's mapping writes too,
/// so a change set that carries only one side of a link has the same effect on both stores.
struct MemoryLinks: Sendable {
    /// How one side is kept.
    enum Side: Sendable, Hashable {
        /// A key in the row (a to-one side).
        case key
        /// A list per owner (a to-many side).
        case list
        /// Derived from the inverse `entity.relationship`, which is kept.
        case inverse(entity: String, relationship: String, isList: Bool)
    }

    private let sides: [String: [String: Side]]

    init(model: ManagedObjectModel) {
        var sides: [String: [String: Side]] = [:]
        for entity in model.entities {
            for relationship in entity.relationships {
                sides[entity.name, default: [:]][relationship.name] = Self.side(relationship, in: entity, model)
            }
        }
        self.sides = sides
    }

    /// How `entity.relationship` is kept (`nil` for a key the model does not have).
    func side(_ entity: String, _ relationship: String) -> Side? {
        sides[entity]?[relationship]
    }

    private static func side(_ relationship: Relationship, in entity: Entity, _ model: ManagedObjectModel) -> Side {
        let own: Side = relationship.isToMany ? .list : .key
        guard let (inverseEntity, inverse) = model.inverse(of: relationship) else { return own }
        let ordered = relationship.kind == .orderedToMany
        let inverseOrdered = inverse.kind == .orderedToMany
        // By the declaring entity: every entity that inherits the relationship keeps the same side.
        let declarer = model.declaringEntity(of: relationship.name, in: entity.name)
        let sortsFirst = (declarer, relationship.name) < (inverseEntity.name, inverse.name)
        let keepsThis: Bool
        switch (relationship.isToMany, inverse.isToMany) {
        case (true, false): keepsThis = true
        case (false, true): keepsThis = false
        case (true, true): keepsThis = ordered == inverseOrdered ? (ordered || sortsFirst) : ordered
        case (false, false): keepsThis = sortsFirst
        }
        guard !keepsThis else { return own }
        return .inverse(entity: inverseEntity.name, relationship: inverse.name, isList: inverse.isToMany)
    }
}
