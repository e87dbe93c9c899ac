import Foundation

extension MemoryStore {
    /// Applies a change set atomically: deletes, then inserts and upserts, updates, owned to-one links and
    /// owned to-many member lists. Any error restores every row touched and is rethrown.
    ///
    /// - Throws: ``CVManagedStructError/conflict(entity:message:)`` for a stale or missing row,
    ///   ``CVManagedStructError/constraintViolation(entity:key:message:)`` for a duplicate unique value or a
    ///   link to a missing row, and the validation errors of ``fetch(_:)``.
    @_spi(StoreImplementation) public func apply(_ changes: ChangeSet) throws -> SaveResult {
        let resolved = try changes.resolved(against: index, rules: Self.valueRules)
        return try locked {
            state.begin()
            do {
                let tombstones = history == nil ? [:] : tombstones(of: resolved)
                var writer = ChangeWriter(index: index, links: links)
                let result = try writer.apply(resolved, to: &state)
                history?.record(resolved.changes, result, tombstones: tombstones)
                return result
            } catch {
                state.rollback()
                throw error
            }
        }
    }

    /// The rules this store adds to a change set's resolution: dates kept as PostgreSQL keeps them (see
    /// ``ChangeWriter/storedPrecision(_:)``), so a struct that round-trips through `MemoryStore` compares as
    /// it would through `PostgresStore`; and what PostgreSQL cannot keep refused as `PostgresStore` refuses it
    /// (``StorableValues``).
    static let valueRules = [
        ValueRule(.date) { value, _, _ in
            let stored = ChangeWriter.storedPrecision(value)
            return stored == value ? nil : stored
        },
        ValueRule(.string, refuseUnstorable), ValueRule(.decimal, refuseUnstorable),
        // A URL relative to a base is kept as its absolute string, as `PostgresStore` keeps it (and reads it
        // back): the same URL, without its base.
        ValueRule(.uri) { value, _, _ in
            guard case .uri(let url) = value, url.baseURL != nil, let absolute = URL(string: url.absoluteString)
            else { return nil }
            return .uri(absolute)
        },
    ]

    private static let refuseUnstorable: ValueRule.Apply = { value, entity, position in
        guard let problem = StorableValues.problem(value) else { return nil }
        throw CVManagedStructError(
            .structValueError, entity: entity.name, key: entity.layout.names[position], message: problem)
    }
}

/// The steps of one ``MemoryStore/apply(_:)`` on the locked state.
private struct ChangeWriter {
    let index: ModelIndex
    let links: MemoryLinks
    var keys: [ManagedObjectID: Int64] = [:]

    init(index: ModelIndex, links: MemoryLinks) {
        self.index = index
        self.links = links
    }

    mutating func apply(_ resolved: ResolvedChangeSet, to state: inout MemoryState) throws -> SaveResult {
        let changes = resolved.changes
        for (deletion, entity) in zip(changes.deletes, resolved.deleteEntities) {
            try delete(deletion, entity, in: &state)
        }
        for (insert, entity) in zip(changes.inserts, resolved.insertEntities) {
            try self.insert(insert, entity, in: &state)
        }
        for (update, entity) in zip(changes.updates, resolved.updateEntities) {
            try self.update(update, entity, in: &state)
        }
        for change in changes.inserts + changes.updates where !change.toOne.isEmpty {
            try link(change, in: &state)
        }
        for change in changes.relationships { try setMembers(change, in: &state) }
        var result = SaveResult()
        for insert in changes.inserts {
            guard let key = keys[insert.id] else { continue }
            let id = ManagedObjectID.permanent(insert.id.entityName, key)
            result.permanentIDs[insert.id] = id
            result.versions[id] = state.row(id.entityName, key)?.version
        }
        for update in changes.updates {
            guard let key = update.id.primaryKey else { continue }
            result.versions[update.id] = state.row(update.id.entityName, key)?.version
        }
        return result
    }

    private func delete(_ deletion: ObjectDeletion, _ entity: EntityIndex, in state: inout MemoryState) throws {
        guard let key = deletion.id.primaryKey, let row = state.row(entity.name, key) else {
            throw CVManagedStructError.conflict(entity: entity.name, message: "\(deletion.id) no longer exists")
        }
        try checkVersion(deletion.version, row, deletion.id)
        state.setRow(entity.name, key, nil)
        for attribute in entity.uniqueAttributes {
            let value = row.attributes[attribute.name] ?? .null
            if !value.isNull, state.uniqueOwner("\(entity.root).\(attribute.name)", value) == key {
                state.setUniqueOwner("\(entity.root).\(attribute.name)", value, nil)
            }
        }
        for relationship in entity.entity.relationships where links.side(entity.name, relationship.name) == .list {
            if state.members("\(entity.root).\(relationship.name)", key) != nil {
                state.setMembers("\(entity.root).\(relationship.name)", key, nil)
            }
        }
    }

    private mutating func insert(_ change: ObjectChange, _ entity: EntityIndex, in state: inout MemoryState) throws {
        let given = change.attributes
        if let upsertKey = change.upsertKey {
            if let value = given[upsertKey], !value.isNull,
                let existing = state.uniqueOwner("\(entity.root).\(upsertKey)", value),
                var row = state.row(entity.name, existing)
            {
                let old = row.attributes
                row.attributes.merge(given)
                row.version += 1
                try writeUnique(entity, existing, old: old, new: row.attributes, in: &state)
                state.setRow(entity.name, existing, row)
                keys[change.id] = existing
                return
            }
        }
        // Resolution made sure every required attribute without a default has a value.
        var attributes = given
        for (position, attribute) in entity.entity.attributes.enumerated() where attributes[at: position] == nil {
            attributes[at: position] = attribute.defaultValue ?? .null
        }
        // A hierarchy's entities share its root's keys, as they share one table in PostgreSQL: a key names
        // one row of the hierarchy, which a link to a parent relies on.
        let key = state.nextKey(entity.root)
        try writeUnique(entity, key, old: AttributeValues(), new: attributes, in: &state)
        state.setRow(entity.name, key, MemoryRow(version: 1, attributes: attributes, foreignKeys: [:]))
        keys[change.id] = key
    }

    private func update(_ change: ObjectChange, _ entity: EntityIndex, in state: inout MemoryState) throws {
        guard let key = change.id.primaryKey, var row = state.row(entity.name, key) else {
            throw CVManagedStructError.conflict(entity: entity.name, message: "\(change.id) no longer exists")
        }
        if change.unlessCurrent {
            // Still at the version read: the row already holds these values.
            if row.version == change.version { return }
        } else {
            try checkVersion(change.version, row, change.id)
        }
        let old = row.attributes
        row.attributes.merge(change.attributes)
        row.version += 1
        try writeUnique(entity, key, old: old, new: row.attributes, in: &state)
        state.setRow(entity.name, key, row)
    }

    private func link(_ change: ObjectChange, in state: inout MemoryState) throws {
        let entity = try index.entity(change.id.entityName)
        let key = try resolve(change.id, in: state)
        guard var row = state.row(entity.name, key) else { return }
        // The links' names, kinds and destinations were checked by `ChangeSet.resolved(against:rules:)`.
        for (name, target) in change.toOne {
            // A side this store derives from its inverse is written through the inverse's change.
            guard links.side(entity.name, name) == .key else { continue }
            if let target {
                row.foreignKeys[name] = try resolve(target, in: state)
            } else {
                row.foreignKeys[name] = nil
            }
        }
        state.setRow(entity.name, key, row)
    }

    private func setMembers(_ change: RelationshipChange, in state: inout MemoryState) throws {
        let entity = try index.entity(change.owner.entityName)
        let relationship = try entity.relationship(change.relationship)
        guard links.side(entity.name, relationship.name) == .list else { return }
        let owner = try resolve(change.owner, in: state)
        var members: [Int64] = []
        var seen = Set<Int64>()
        for member in change.members {
            let key = try resolve(member, in: state)
            guard seen.insert(key).inserted else {
                throw CVManagedStructError.constraintViolation(
                    entity: entity.name, key: relationship.name, message: "\(member) is listed twice")
            }
            members.append(key)
        }
        let join = "\(entity.root).\(relationship.name)"
        let old = state.members(join, owner) ?? []
        state.setMembers(join, owner, members.isEmpty ? nil : members)
        // A many-to-many ordered on both sides keeps a list per side: keep the other side's lists holding
        // exactly the same pairs (dropped members forget the owner, new ones list it last), whatever this
        // change set says about them, so the two sides never disagree on who is linked.
        guard relationship.kind == .orderedToMany, let inverse = entity.inverses[relationship.name],
            inverse.kind == .orderedToMany
        else { return }
        let destinationRoot = index.entities[relationship.destination]?.root ?? relationship.destination
        let mirror = "\(destinationRoot).\(inverse.name)"
        let kept = Set(members)
        for dropped in old where !kept.contains(dropped) {
            let list = (state.members(mirror, dropped) ?? []).filter { $0 != owner }
            state.setMembers(mirror, dropped, list.isEmpty ? nil : list)
        }
        for member in members {
            var list = state.members(mirror, member) ?? []
            if !list.contains(owner) {
                list.append(owner)
                state.setMembers(mirror, member, list)
            }
        }
    }

    /// The stored key of an ID (temporary IDs through this change set's inserts); the row must exist.
    private func resolve(_ id: ManagedObjectID, in state: MemoryState) throws -> Int64 {
        guard let key = id.isTemporary ? keys[id] : id.primaryKey, exists(id, key, in: state) else {
            throw CVManagedStructError.constraintViolation(
                entity: id.entityName, key: nil, message: "\(id) is neither stored nor inserted by this save")
        }
        return key
    }

    /// Whether the row of an ID exists; an ID may name a parent of the row's entity (a link holds a key).
    private func exists(_ id: ManagedObjectID, _ key: Int64, in state: MemoryState) -> Bool {
        if state.exists(id.entityName, key) { return true }
        guard index.hasHierarchies, let entity = index.entities[id.entityName] else { return false }
        return state.exists(kindOf: entity, key)
    }

    private func checkVersion(_ version: Int64?, _ row: MemoryRow, _ id: ManagedObjectID) throws {
        if let version, version != row.version {
            throw CVManagedStructError.conflict(
                entity: id.entityName,
                message: "\(id) was read at version \(version) but is now at version \(row.version)")
        }
    }

    /// The value as PostgreSQL keeps it: dates to the nearest microsecond (`timestamptz`), so a struct that
    /// round-trips through `MemoryStore` compares as it would through `PostgresStore`.
    static func storedPrecision(_ value: AttributeValue) -> AttributeValue {
        guard case .date(let date) = value else { return value }
        let micros = ValueOrder.microseconds(date)
        guard micros.isFinite else { return value }
        return .date(Date(timeIntervalSinceReferenceDate: micros / 1_000_000))
    }

    private func writeUnique(
        _ entity: EntityIndex, _ key: Int64, old: AttributeValues, new: AttributeValues,
        in state: inout MemoryState
    ) throws {
        for attribute in entity.uniqueAttributes {
            // Keyed by the hierarchy's root: a unique attribute is unique across the hierarchy.
            let name = "\(entity.root).\(attribute.name)"
            let before = old[attribute.name] ?? .null
            let after = new[attribute.name] ?? .null
            guard before != after else { continue }
            if !after.isNull, let owner = state.uniqueOwner(name, after), owner != key {
                throw CVManagedStructError.constraintViolation(
                    entity: entity.name, key: attribute.name, message: "duplicate value for a unique attribute")
            }
            if !before.isNull, state.uniqueOwner(name, before) == key { state.setUniqueOwner(name, before, nil) }
            if !after.isNull { state.setUniqueOwner(name, after, key) }
        }
    }
}
