@_spi(StoreImplementation) import CoreValue

/// A resolved change set (`ChangeSet.resolved(against:rules:)`: every key known, every value of its column's
/// type, text without NUL characters, required values present) grouped by entity and relationship, before
/// any SQL is sent. It checks nothing again and cannot fail.
///
/// Insert groups are ordered so that rows referenced by foreign keys are inserted first where the graph
/// allows. Rows written unless current (unique structs saved unchanged) are merged only once found stale
/// (``Row/deferred``).
struct SavePlan {
    /// One inserted or updated row.
    struct Row {
        var id: ManagedObjectID
        var version: Int64?
        /// In the entity's layout.
        var attributes: AttributeValues
        /// Owning (foreign-key) to-one relationships only.
        var toOne: [String: ManagedObjectID?]
        /// Write only if the stored version moved on from `version` (``ObjectChange/unlessCurrent``).
        var unlessCurrent = false
        /// For a row written unless current, the changes it stands for, merged into its values only if the
        /// row turns out stale (``materialized(_:of:)``); until then `attributes` are the first change's.
        /// Such a row is usually current and never written, so nothing is merged up front.
        var deferred: [ObjectChange] = []

        /// The value the row writes for an attribute: with deferred changes, the last one that sets it (as
        /// ``SavePlan/materialized(_:)`` merges them), as given.
        func value(of name: String) -> AttributeValue? {
            guard !deferred.isEmpty else { return attributes[name] }
            return deferred.last { $0.attributes[name] != nil }?.attributes[name]
        }
    }

    /// The inserts of one entity; with an upsert key, the upserts on that attribute.
    struct InsertGroup {
        var entity: Entity
        var upsertKey: Attribute?
        var rows: [Row]
    }

    /// The updates of one entity.
    struct UpdateGroup {
        var entity: Entity
        var rows: [Row]
    }

    /// The deletes of one entity.
    struct DeleteGroup {
        var entity: Entity
        var keys: [Int64]
        var versions: [Int64?]
    }

    /// The new member lists of one owning to-many relationship.
    struct LinkGroup {
        var entity: Entity
        var relationship: Relationship
        var changes: [(owner: ManagedObjectID, members: [ManagedObjectID])]
    }

    private(set) var inserts: [InsertGroup] = []
    /// How many rows the inserts hold: one per insert of the change set.
    var insertCount: Int { inserts.reduce(0) { $0 + $1.rows.count } }
    private(set) var updates: [UpdateGroup] = []
    private(set) var deletes: [DeleteGroup] = []
    private(set) var links: [LinkGroup] = []
    let mapping: SchemaMapping

    /// Groups a resolved change set.
    init(mapping: SchemaMapping, changes: ResolvedChangeSet) {
        self.mapping = mapping
        // A request's save has one kind of change: the planners of the others are not entered (each makes its
        // tables and sorts its groups even for nothing).
        if !changes.changes.inserts.isEmpty { planInserts(changes) }
        if !changes.changes.updates.isEmpty { planUpdates(changes) }
        if !changes.changes.deletes.isEmpty { planDeletes(changes) }
        if !changes.changes.relationships.isEmpty { planLinks(changes) }
    }

    /// The rules PostgreSQL adds to a change set's resolution: what it cannot keep (``StorableValues``: text
    /// with a NUL character, a Decimal NaN) is refused before anything is sent.
    static let valueRules = [ValueRule(.string, refuseUnstorable), ValueRule(.decimal, refuseUnstorable)]

    private static let refuseUnstorable: ValueRule.Apply = { value, entity, position in
        try ValueCoercion.checkStorable(value, entity: entity.name, key: entity.layout.names[position])
        return nil
    }

    private mutating func planInserts(_ resolved: ResolvedChangeSet) {
        var groups: [InsertGroup] = []
        var index: [String: Int] = [:]
        // The previous row's group, for the usual run of rows of one entity and shape: no group key (several
        // strings per row) is built and hashed for those.
        var previous: (info: EntityIndex, upsert: String?, plain: Bool, position: Int)?
        for (offset, change) in resolved.changes.inserts.enumerated() {
            let info = resolved.insertEntities[offset]
            let entity = info.entity
            let row = makeRow(change, entity: entity)
            // A resolved insert's upsert key names a unique attribute (its position is in `upsertPositions`).
            let upsertKeyName = change.upsertKey
            // Only an upsert's group depends on which columns the row sets (see below).
            let plain = row.attributes.isComplete && row.toOne.isEmpty
            if let previous, previous.info === info, previous.upsert == upsertKeyName,
                upsertKeyName == nil || (plain && previous.plain)
            {
                groups[previous.position].rows.append(row)
                continue
            }
            var groupKey = entity.name + "\u{0}" + (upsertKeyName ?? "")
            if upsertKeyName != nil {
                // An upsert's DO UPDATE overwrites every column of the statement, so rows that set different
                // columns go to different statements: a column one row leaves out must not be filled with a
                // default or NULL and then overwrite the existing row's value.
                // A row with every attribute (the usual case) needs no sorted key list to say which it sets.
                let attributes = row.attributes.isComplete ? ["\u{2}"] : row.attributes.keys
                let columns = attributes + ["\u{1}"] + row.toOne.keys.sorted()
                groupKey += "\u{0}" + columns.joined(separator: "\u{0}")
            }
            let position: Int
            if let existing = index[groupKey] {
                position = existing
                groups[position].rows.append(row)
            } else {
                position = groups.count
                index[groupKey] = position
                // Resolution found the key's position: the attribute is read there, not looked up by name.
                let upsertKey = resolved.upsertPositions[offset].map { entity.attributes[$0] }
                groups.append(InsertGroup(entity: entity, upsertKey: upsertKey, rows: [row]))
            }
            previous = (info, upsertKeyName, plain, position)
        }
        // Entities in name order (then by upsert key and columns) before the dependency order: every save
        // writes the tables in the same order whatever the input order, which keeps lock order deterministic.
        let keyed = zip(groupKeys(index), groups).sorted { $0.0 < $1.0 }.map(\.1)
        inserts = Self.dependencyOrder(keyed)
    }

    /// The group keys of `index` (key → position), listed by position.
    private func groupKeys(_ index: [String: Int]) -> [String] {
        var keys = [String](repeating: "", count: index.count)
        for (key, position) in index { keys[position] = key }
        return keys
    }

    /// Orders insert groups so a group comes after the groups whose new rows it references, where there is no
    /// cycle; references that still point forward are linked after all inserts.
    private static func dependencyOrder(_ groups: [InsertGroup]) -> [InsertGroup] {
        // One group (a bulk insert of one entity) depends on no other: its rows' keys are not walked.
        guard groups.count > 1 else { return groups }
        var ordered: [InsertGroup] = []
        var state = [Int: Bool]()  // false: visiting, true: done
        func visit(_ position: Int) {
            guard state[position] == nil else { return }
            state[position] = false
            let targets = Set(
                groups[position].rows.flatMap { row in
                    row.toOne.values.compactMap { $0 }.filter(\.isTemporary).map(\.entityName)
                })
            for (other, group) in groups.enumerated() where other != position && targets.contains(group.entity.name) {
                visit(other)
            }
            state[position] = true
            ordered.append(groups[position])
        }
        for position in groups.indices { visit(position) }
        return ordered
    }

    private mutating func planUpdates(_ resolved: ResolvedChangeSet) {
        var index: [String: Int] = [:]
        let changes = resolved.changes.updates
        // Where each changed ID's row went, to merge a later change of the same ID into it; sized for the
        // changes at once (growing it one change at a time rehashed it a quarter of the time). One change (a
        // request's save) has nothing to merge with: no table.
        let mayRepeat = changes.count > 1
        var rowIndex: [ManagedObjectID: (Int, Int)] = mayRepeat ? Dictionary(minimumCapacity: changes.count) : [:]
        for (offset, change) in changes.enumerated() {
            let entity = resolved.updateEntities[offset].entity
            if mayRepeat, let (group, position) = rowIndex[change.id] {
                if change.unlessCurrent, updates[group].rows[position].unlessCurrent {
                    updates[group].rows[position].deferred.append(change)
                    continue
                }
                if !updates[group].rows[position].deferred.isEmpty {
                    updates[group].rows[position] = materialized(updates[group].rows[position], of: entity)
                }
                let row = makeRow(change, entity: entity)
                updates[group].rows[position].attributes.merge(row.attributes)
                updates[group].rows[position].toOne.merge(row.toOne) { $1 }
                if !row.unlessCurrent {
                    updates[group].rows[position].unlessCurrent = false
                    updates[group].rows[position].version = row.version
                }
                continue
            }
            let row =
                change.unlessCurrent
                ? Row(
                    id: change.id, version: change.version, attributes: change.attributes, toOne: [:],
                    unlessCurrent: true, deferred: [change])
                : makeRow(change, entity: entity)
            let group: Int
            if let last = updates.indices.last, updates[last].entity.name == entity.name {
                // The usual run of one entity's changes: its group is the last one, found without hashing.
                group = last
            } else if !index.isEmpty, let existing = index[entity.name] {
                group = existing
            } else {
                group = updates.count
                // Only a change still to come looks groups up: one change (a request's save) hashes no name.
                if offset < changes.count - 1 { index[entity.name] = group }
                updates.append(UpdateGroup(entity: entity, rows: []))
            }
            if mayRepeat { rowIndex[change.id] = (group, updates[group].rows.count) }
            updates[group].rows.append(row)
        }
        if updates.count > 1 { updates.sort { $0.entity.name < $1.entity.name } }
    }

    private mutating func planDeletes(_ resolved: ResolvedChangeSet) {
        var index: [String: Int] = [:]
        var seen = Set<ManagedObjectID>()
        for (deletion, info) in zip(resolved.changes.deletes, resolved.deleteEntities)
        where seen.insert(deletion.id).inserted {
            let entity = info.entity
            // Resolution refused a delete of a never-saved (temporary) ID: a permanent one has a key.
            guard let key = deletion.id.primaryKey else { continue }
            if let group = index[entity.name] {
                deletes[group].keys.append(key)
                deletes[group].versions.append(deletion.version)
            } else {
                index[entity.name] = deletes.count
                deletes.append(DeleteGroup(entity: entity, keys: [key], versions: [deletion.version]))
            }
        }
    }

    private mutating func planLinks(_ resolved: ResolvedChangeSet) {
        var index: [String: Int] = [:]
        // Per group, the position of each owner's change: a later change of the same owner replaces it.
        var ownerPositions: [[ManagedObjectID: Int]] = []
        for (change, link) in zip(resolved.changes.relationships, resolved.links) {
            let (entity, relationship) = (link.entity.entity, link.relationship)
            // A change set carries every changed side; the links are written from the side that owns them (the
            // context changes both sides together).
            guard mapping.storage(of: relationship, in: entity) == .joinTable else { continue }
            let groupKey = entity.name + "\u{0}" + relationship.name
            if let group = index[groupKey] {
                if let position = ownerPositions[group][change.owner] {
                    links[group].changes[position].members = change.members
                } else {
                    ownerPositions[group][change.owner] = links[group].changes.count
                    links[group].changes.append((change.owner, change.members))
                }
            } else {
                index[groupKey] = links.count
                ownerPositions.append([change.owner: 0])
                links.append(
                    LinkGroup(entity: entity, relationship: relationship, changes: [(change.owner, change.members)]))
            }
        }
        links.sort { ($0.entity.name, $0.relationship.name) < ($1.entity.name, $1.relationship.name) }
    }

    /// A row whose changes were deferred (see ``Row/deferred``) with them merged, the last change setting a
    /// value winning; a row without deferred changes as it is.
    func materialized(_ row: Row, of entity: Entity) -> Row {
        guard let first = row.deferred.first else { return row }
        var made = makeRow(first, entity: entity)
        for change in row.deferred.dropFirst() {
            let next = makeRow(change, entity: entity)
            made.attributes.merge(next.attributes)
            made.toOne.merge(next.toOne) { $1 }
        }
        made.version = row.version
        made.unlessCurrent = row.unlessCurrent
        return made
    }

    /// A resolved change as a row: its values as they are (the change's storage, shared), its owning to-one
    /// links.
    private func makeRow(_ change: ObjectChange, entity: Entity) -> Row {
        Row(
            id: change.id, version: change.version, attributes: change.attributes, toOne: toOneLinks(change, entity),
            unlessCurrent: change.unlessCurrent)
    }

    /// The owning to-one links of a change; non-owning ones are written from their owning side.
    private func toOneLinks(_ change: ObjectChange, _ entity: Entity) -> [String: ManagedObjectID?] {
        var toOne: [String: ManagedObjectID?] = [:]
        for (key, target) in change.toOne {
            if let relationship = entity.relationship(named: key),
                mapping.storage(of: relationship, in: entity) == .foreignKey
            {
                toOne[key] = .some(target)
            }
        }
        return toOne
    }
}
