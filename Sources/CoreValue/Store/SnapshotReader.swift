/// Builds ``RowSnapshot``s from ``MemoryState`` rows, filling every relationship on both sides: owned links
/// directly, inverse links through reverse maps built once per call (so a fetch of n rows costs O(n), not
/// O(n²)). Links to rows that no longer exist are left out, as a foreign key `ON DELETE SET NULL` and join
/// rows `ON DELETE CASCADE` would.
struct SnapshotReader {
    let index: ModelIndex
    let links: MemoryLinks
    let state: MemoryState
    private var reverse: [String: [Int64: [Int64]]] = [:]

    init(index: ModelIndex, links: MemoryLinks, state: MemoryState) {
        self.index = index
        self.links = links
        self.state = state
    }

    /// The snapshot of one row.
    mutating func snapshot(_ entity: EntityIndex, _ key: Int64, _ row: MemoryRow) -> RowSnapshot {
        var toOne: [String: Int64?] = [:]
        var toMany: [String: [Int64]] = [:]
        for relationship in entity.entity.relationships {
            if relationship.isToMany {
                toMany[relationship.name] = members(entity, key, relationship)
            } else {
                toOne[relationship.name] = .some(self.toOne(entity, key, row, relationship.name))
            }
        }
        return RowSnapshot(
            id: .permanent(entity.name, key), version: row.version, attributes: row.attributes, toOne: toOne,
            toMany: toMany)
    }

    /// The destination key of a to-one relationship, or `nil`.
    mutating func toOne(_ entity: EntityIndex, _ key: Int64, _ row: MemoryRow, _ name: String) -> Int64? {
        guard let relationship = entity.relationships[name] else { return nil }
        switch links.side(entity.name, name) {
        case .key?:
            guard let target = row.foreignKeys[name], exists(relationship.destination, target) else {
                return nil
            }
            return target
        case .inverse(let other, let inverse, let isList)?:
            return isList
                ? owners(other, inverse, of: key).first : sources(ofForeignKey: other, inverse, pointingAt: key).first
        case .list?, nil:
            return nil
        }
    }

    /// The destination keys a relationship of a row reaches: its members, or its one to-one destination.
    mutating func related(_ entity: EntityIndex, _ key: Int64, _ row: MemoryRow, _ relationship: Relationship)
        -> [Int64]
    {
        if relationship.isToMany { return members(entity, key, relationship) }
        return toOne(entity, key, row, relationship.name).map { [$0] } ?? []
    }

    private mutating func members(_ entity: EntityIndex, _ key: Int64, _ relationship: Relationship) -> [Int64] {
        switch links.side(entity.name, relationship.name) {
        case .list?:
            let stored = (state.members("\(entity.root).\(relationship.name)", key) ?? []).filter {
                exists(relationship.destination, $0)
            }
            return relationship.kind == .orderedToMany ? stored : stored.sorted()
        case .inverse(let other, let inverse, let isList)?:
            return isList ? owners(other, inverse, of: key) : sources(ofForeignKey: other, inverse, pointingAt: key)
        case .key?, nil:
            return []
        }
    }

    /// Whether the row `key` of `entity` exists: in a hierarchy, as a row of any entity whose objects are
    /// `entity`'s (a link to a parent holds its subentities' keys). The usual hit costs one lookup; a model
    /// without inheritance never looks further.
    private func exists(_ entity: String, _ key: Int64) -> Bool {
        if state.exists(entity, key) { return true }
        guard index.hasHierarchies, let info = index.entities[entity] else { return false }
        return state.exists(kindOf: info, key)
    }

    /// Owners (ascending) of the join table `entity.relationship` that list `member`.
    private mutating func owners(_ entity: String, _ relationship: String, of member: Int64) -> [Int64] {
        let name = "join:\(entity).\(relationship)"
        if reverse[name] == nil {
            var map: [Int64: [Int64]] = [:]
            let root = index.entities[entity]?.root ?? entity
            for (owner, members) in state.joins["\(root).\(relationship)"] ?? [:]
            where exists(entity, owner) {
                for member in members { map[member, default: []].append(owner) }
            }
            for key in map.keys { map[key]?.sort() }
            reverse[name] = map
        }
        return reverse[name]?[member] ?? []
    }

    /// Rows (ascending) of `entity` whose foreign key `relationship` is `target`.
    private mutating func sources(ofForeignKey entity: String, _ relationship: String, pointingAt target: Int64)
        -> [Int64]
    {
        let name = "fk:\(entity).\(relationship)"
        if reverse[name] == nil {
            var map: [Int64: [Int64]] = [:]
            // In a hierarchy, the rows of every entity that has the relationship (the inheriting ones too).
            for kind in index.entities[entity]?.kinds ?? [entity] {
                for (key, row) in state.tables[kind] ?? [:] {
                    if let foreign = row.foreignKeys[relationship] { map[foreign, default: []].append(key) }
                }
            }
            for key in map.keys { map[key]?.sort() }
            reverse[name] = map
        }
        return reverse[name]?[target] ?? []
    }
}
