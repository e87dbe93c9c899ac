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
        lineages[name]?.root ?? name
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
        guard let lineage = lineages[name] else { return false }
        return lineage.root != name || lineage.hasSubentities
    }

    /// The entity that declares `key` among `name` and its parents: `name` itself for its own keys and
    /// without inheritance. A hierarchy declares each key once, so a store keys what it keeps for an
    /// inherited property (a join table, a choice of which side keeps a link) by the declaring entity, the
    /// same for every entity that inherits it.
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
    ///   parents, or a key that an entity declares although its parent chain has it.
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

    /// Refuses a key that two entities of one hierarchy declare (siblings, or cousins): a hierarchy is stored
    /// as one unit, where a key names one column or one join table; a key they share belongs on a common
    /// parent.
    private static func checkKeysOnce(_ entities: [Entity], index: [String: Int]) throws {
        var declared: [String: [String: String]] = [:]
        for entity in entities where entity.parent != nil || entities.contains(where: { $0.parent == entity.name }) {
            var root = entity
            while let parent = root.parent.flatMap({ index[$0] }) { root = entities[parent] }
            for key in entity.declaredAttributes.map(\.name) + entity.declaredRelationships.map(\.name) {
                if let other = declared[root.name]?[key] {
                    throw CVManagedStructError.invalidModel(
                        entity: entity.name, key: key,
                        message: "'\(other)' of the same hierarchy declares '\(key)' too; declare it once, on a "
                            + "common parent")
                }
                declared[root.name, default: [:]][key] = entity.name
            }
        }
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
