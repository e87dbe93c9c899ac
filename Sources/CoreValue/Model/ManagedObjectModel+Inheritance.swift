/// Entity inheritance: resolving each entity's inherited properties when a model is built, and the questions
/// contexts and stores ask of a hierarchy.
///
/// A hierarchy is stored as one unit (its root's table in PostgreSQL, one key sequence in `MemoryStore`), so
/// a primary key names one row across all of a hierarchy's entities: a link to an entity with subentities is
/// a key of its root's, and the row's own entity says which subentity it is.
extension ManagedObjectModel {
    /// An entity's place in its hierarchy, worked out once when the model is built.
    struct Lineage: Sendable, Hashable {
        /// The entity at the top of the chain of parents (the entity itself when it has no parent).
        var root: String
        /// The entity, then its parent, then the parent's parent, up to the root.
        var ancestors: [String]
        /// The entities whose objects are objects of this one: itself unless abstract, and every subentity
        /// below it that is not abstract, in model order.
        var kinds: [String]
        /// Whether an entity names this one as its parent.
        var hasSubentities = false
    }

    /// The entity at the top of `name`'s chain of parents: `name` itself when it has no parent (or is no
    /// entity of the model).
    ///
    /// A hierarchy is stored under its root: in PostgreSQL one table of the root's name with an entity column.
    public func rootEntity(of name: String) -> String {
        // Without hierarchies every entity is its own root: no name hashed (a request's save asks once).
        guard hasHierarchies else { return name }
        return lineages[name]?.root ?? name
    }

    /// The entities whose objects a fetch of `name` returns: `name` itself unless it is abstract, and every
    /// subentity below it that is not abstract, in model order. Empty for a name the model does not have.
    public func concreteEntities(of name: String) -> [String] {
        lineages[name]?.kinds ?? []
    }

    /// Whether `name` is `ancestor` or one of its subentities, at any depth: whether an object of `name` may
    /// be held by a relationship whose destination is `ancestor`.
    public func isEntity(_ name: String, kindOf ancestor: String) -> Bool {
        name == ancestor || (lineages[name]?.ancestors.contains(ancestor) ?? false)
    }

    /// Whether the entity has a parent or a subentity: whether its rows share storage with another entity's.
    public func isInHierarchy(_ name: String) -> Bool {
        guard hasHierarchies, let lineage = lineages[name] else { return false }
        return lineage.root != name || lineage.hasSubentities
    }

    /// The entity that declares `key` among `name` and its parents: `name` itself for its own keys and
    /// without inheritance. A chain of parents declares each key once, so a store keys what it keeps for an
    /// inherited property (a join table, a choice of which side keeps a link) by the declaring entity, the
    /// same for every entity that inherits it. Siblings or cousins may each declare an attribute of one name
    /// and type (they share a column); each is then its own declarer. A relationship is declared once per
    /// hierarchy.
    public func declaringEntity(of key: String, in name: String) -> String {
        guard let ancestors = lineages[name]?.ancestors, ancestors.count > 1 else { return name }
        for ancestor in ancestors.reversed() {
            guard let entity = entity(named: ancestor) else { continue }
            if entity.declaredAttributes.contains(where: { $0.name == key })
                || entity.declaredRelationships.contains(where: { $0.name == key })
            {
                return ancestor
            }
        }
        return name
    }

    /// Whether any entity names `name` as its parent.
    public func hasSubentities(_ name: String) -> Bool {
        lineages[name]?.hasSubentities ?? false
    }

    /// The entities with each entity's inherited properties before its own.
    ///
    /// Parents are resolved before their subentities (by depth, found by walking each chain of parents up,
    /// never by recursion), so a subentity copies a parent that is already complete. An entity that was
    /// resolved before (its inherited counts set) keeps only its own properties and inherits afresh.
    ///
    /// - Throws: ``CVManagedStructError/invalidModel(entity:key:message:)`` for an unknown parent, a cycle of
    ///   parents, a key that an entity declares although its parent chain has it, or a key two entities of
    ///   one hierarchy declare that cannot share a column (see `checkKeysOnce`).
    static func resolveInheritance(_ entities: [Entity], index: [String: Int]) throws -> [Entity] {
        guard
            entities.contains(where: {
                $0.parent != nil || $0.inheritedAttributeCount > 0 || $0.inheritedRelationshipCount > 0
            })
        else {
            return entities
        }
        let depths = try depths(entities, index: index)
        var resolved: [Entity?] = Array(repeating: nil, count: entities.count)
        let order = entities.indices.sorted { (depths[$0], $0) < (depths[$1], $1) }
        for position in order {
            var entity = entities[position]
            let ownAttributes = Array(entity.declaredAttributes)
            let ownRelationships = Array(entity.declaredRelationships)
            var inheritedAttributes: [Attribute] = []
            var inheritedRelationships: [Relationship] = []
            if let parentName = entity.parent, let parentPosition = index[parentName],
                let parent = resolved[parentPosition]
            {
                inheritedAttributes = parent.attributes
                inheritedRelationships = parent.relationships
                let inherited = Set(parent.attributes.map(\.name) + parent.relationships.map(\.name))
                for key in ownAttributes.map(\.name) + ownRelationships.map(\.name) where inherited.contains(key) {
                    throw CVManagedStructError.invalidModel(
                        entity: entity.name, key: key,
                        message: "declares '\(key)' again; it is inherited from '\(parentName)'")
                }
            }
            entity.attributes = inheritedAttributes + ownAttributes
            entity.relationships = inheritedRelationships + ownRelationships
            entity.inheritedAttributeCount = inheritedAttributes.count
            entity.inheritedRelationshipCount = inheritedRelationships.count
            resolved[position] = entity
        }
        let result = resolved.enumerated().map { $0.element ?? entities[$0.offset] }
        try checkKeysOnce(result, index: index)
        return result
    }

    /// Checks the keys that two entities of one hierarchy declare (siblings, or cousins). A hierarchy is
    /// stored as one unit, where a key names one column or one join table:
    ///
    /// - Attributes of the same name and type are accepted (as Core Data accepts them): they share one
    ///   nullable column of the hierarchy's table, and each entity's own optionality and default apply to
    ///   its rows. A unique one is refused (see ``sharedAttributeConflict(_:_:key:in:)``): one UNIQUE
    ///   column would be unique across both entities, which neither declared.
    /// - Attributes of the same name and different types are refused, naming both entities and types.
    /// - A relationship that two entities declare, or a name one declares as an attribute and the other as
    ///   a relationship, is refused: a relationship they share belongs on a common parent.
    private static func checkKeysOnce(_ entities: [Entity], index: [String: Int]) throws {
        // Per root, per key: the first entity that declares it, and its attribute (nil for a relationship).
        var declared: [String: [String: (entity: String, attribute: Attribute?)]] = [:]
        for entity in entities where entity.parent != nil || entities.contains(where: { $0.parent == entity.name }) {
            var root = entity
            while let parent = root.parent.flatMap({ index[$0] }) { root = entities[parent] }
            let keys =
                entity.declaredAttributes.map { ($0.name, Optional($0)) }
                + entity.declaredRelationships.map { ($0.name, Attribute?.none) }
            for (key, attribute) in keys {
                if let other = declared[root.name]?[key] {
                    if let attribute, let otherAttribute = other.attribute {
                        if let conflict = sharedAttributeConflict(
                            (other.entity, otherAttribute), (entity.name, attribute), key: key, in: root.name)
                        {
                            throw conflict
                        }
                        continue
                    }
                    throw CVManagedStructError.invalidModel(
                        entity: entity.name, key: key,
                        message: "'\(other.entity)' of the same hierarchy declares '\(key)' too; declare it once, on a "
                            + "common parent")
                }
                declared[root.name, default: [:]][key] = (entity.name, attribute)
            }
        }
    }

    /// Why two entities of hierarchy `root` cannot both declare attribute `key` (sharing its column), or
    /// `nil` when they can: ``CVManagedStructError/invalidModel(entity:key:message:)`` with `entity` the
    /// second declarer, `key`, `expected` the first declarer's type and `found` the second's, and a message
    /// naming both entities.
    static func sharedAttributeConflict(
        _ first: (entity: String, attribute: Attribute), _ second: (entity: String, attribute: Attribute),
        key: String, in root: String
    ) -> CVManagedStructError? {
        let firstType = "\(first.attribute.type)", secondType = "\(second.attribute.type)"
        var reason: String
        if first.attribute.type != second.attribute.type {
            reason =
                "'\(first.entity).\(key)' is \(firstType) and '\(second.entity).\(key)' is \(secondType); entities of "
                + "one hierarchy share a column per name, so attributes of the same name need the same type"
        } else if first.attribute.isUnique || second.attribute.isUnique {
            reason =
                "'\(first.entity).\(key)' and '\(second.entity).\(key)' share one column of '\(root)', where "
                + "a unique attribute would be unique across both; declare it once, on a common parent, or not "
                + "unique"
        } else {
            return nil
        }
        var error = CVManagedStructError.invalidModel(entity: second.entity, key: key, message: reason)
        error.expected = firstType
        error.found = secondType
        return error
    }

    /// Each entity's depth in its hierarchy (0 for a root), by walking up from each entity until a root or
    /// an entity whose depth is known.
    private static func depths(_ entities: [Entity], index: [String: Int]) throws -> [Int] {
        var depths = Array(repeating: -1, count: entities.count)
        for start in entities.indices where depths[start] < 0 {
            var chain = [start]
            var onChain: Set<Int> = [start]
            var base = -1
            while let last = chain.last, let parentName = entities[last].parent {
                guard let parent = index[parentName] else {
                    throw CVManagedStructError.invalidModel(
                        entity: entities[last].name, key: nil, message: "unknown parent entity '\(parentName)'")
                }
                if depths[parent] >= 0 {
                    base = depths[parent]
                    break
                }
                guard onChain.insert(parent).inserted else {
                    throw CVManagedStructError.invalidModel(
                        entity: parentName, key: nil,
                        message: "inherits from itself: "
                            + (chain.map { entities[$0].name } + [parentName]).joined(separator: " -> "))
                }
                chain.append(parent)
            }
            for position in chain.reversed() {
                base += 1
                depths[position] = base
            }
        }
        return depths
    }

    /// Every entity's ``Lineage``.
    static func lineages(_ entities: [Entity], index: [String: Int]) -> [String: Lineage] {
        var lineages: [String: Lineage] = [:]
        for entity in entities {
            var ancestors = [entity.name]
            var seen: Set<String> = [entity.name]
            while let last = ancestors.last, let parent = index[last].flatMap({ entities[$0].parent }),
                seen.insert(parent).inserted
            {
                ancestors.append(parent)
            }
            lineages[entity.name] = Lineage(root: ancestors.last ?? entity.name, ancestors: ancestors, kinds: [])
        }
        for entity in entities {
            if let parent = entity.parent { lineages[parent]?.hasSubentities = true }
        }
        for entity in entities where !entity.isAbstract {
            for ancestor in lineages[entity.name]?.ancestors ?? [] {
                lineages[ancestor]?.kinds.append(entity.name)
            }
        }
        return lineages
    }
}
