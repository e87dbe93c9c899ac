@_spi(StoreImplementation) import CoreValue

/// A change set checked against the model and grouped by entity and relationship, before any SQL is sent.
///
/// Every key is known, every value is coerced to its column's type (text with a NUL character is refused),
/// required attributes have values, and insert groups are ordered so that rows referenced by foreign keys
/// are inserted first where the graph allows. Rows written unless current (unique structs saved unchanged)
/// are made only once found stale (``Row/deferred``); the shared `ChangeSet.validate` has checked them
/// before, and a NUL character found then fails the save inside its transaction, so nothing is written.
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
        /// For a row written unless current, the changes it stands for, made into its values only if the row
        /// turns out stale (``materialized(_:)``); until then `attributes` are the first change's as given.
        /// Such a row is usually current and never written, so it is not arranged and coerced up front.
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
    /// The model's entities with their attribute layouts.
    let index: ModelIndex

    /// Checks and groups a change set.
    ///
    /// - Throws: `CVManagedStructError` (unknown entity or key, type mismatch, missing value, invalid object)
    ///   or ``PostgresStoreError`` (a NUL character); nothing has been sent.
    init(mapping: SchemaMapping, changes: ChangeSet, index: ModelIndex? = nil) throws {
        self.mapping = mapping
        self.index = index ?? ModelIndex(mapping.model)
        try planInserts(changes.inserts)
        try planUpdates(changes.updates)
        try planDeletes(changes.deletes)
        try planLinks(changes.relationships)
    }

    private var model: ManagedObjectModel { mapping.model }

    private mutating func planInserts(_ changes: [ObjectChange]) throws {
        var groups: [InsertGroup] = []
        var index: [String: Int] = [:]
        // The previous row's group, for the usual run of rows of one entity and shape: no group key (several
        // strings per row) is built and hashed for those.
        var previous: (info: EntityIndex, upsert: String?, plain: Bool, position: Int)?
        // The previous upsert key by name and position: copying its `Attribute` per row cost about 900
        // instructions (four copies of a struct with a name and a default value).
        var lastUpsertKey: (info: EntityIndex, name: String, position: Int)?
        for change in changes {
            let info =
                if let previous, previous.info.name == change.id.entityName { previous.info } else {
                    try self.index.entity(change.id.entityName)
                }
            let entity = info.entity
            let row = try makeRow(change, entity: info)
            var upsertKeyName: String?
            if let key = change.upsertKey {
                // The previous row's key (a run of upserts shares one): no lookup of it by name per row.
                let position: Int
                if let known = lastUpsertKey, known.info === info, known.name == key {
                    position = known.position
                } else {
                    guard info.attributes[key] != nil, let found = info.layout.position(of: key) else {
                        throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
                    }
                    position = found
                    lastUpsertKey = (info, key, found)
                }
                // The row's values are in the entity's layout (`makeRow` arranged them).
                guard let value = row.attributes[at: position], !value.isNull else {
                    throw CVManagedStructError.missingValue(entity: entity.name, key: key)
                }
                upsertKeyName = key
            }
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
                let upsertKey = upsertKeyName.flatMap { info.attributes[$0] }
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

    private mutating func planUpdates(_ changes: [ObjectChange]) throws {
        var index: [String: Int] = [:]
        // Sized for the changes at once: growing it one change at a time rehashed it a quarter of the time.
        var rowIndex: [ManagedObjectID: (Int, Int)] = Dictionary(minimumCapacity: changes.count)
        var previous: EntityIndex?
        for change in changes {
            // The usual run of changes of one entity: no lookup by name per change.
            let info =
                if let previous, previous.name == change.id.entityName { previous } else {
                    try self.index.entity(change.id.entityName)
                }
            previous = info
            let entity = info.entity
            if let (group, position) = rowIndex[change.id] {
                if change.unlessCurrent, updates[group].rows[position].unlessCurrent {
                    updates[group].rows[position].deferred.append(change)
                    continue
                }
                if !updates[group].rows[position].deferred.isEmpty {
                    updates[group].rows[position] = try materialized(updates[group].rows[position])
                }
                let row = try makeRow(change, entity: info)
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
                : try makeRow(change, entity: info)
            let group: Int
            if let last = updates.indices.last, updates[last].entity.name == entity.name {
                // The usual run of one entity's changes: its group is the last one, found without hashing.
                group = last
            } else if let existing = index[entity.name] {
                group = existing
            } else {
                group = updates.count
                index[entity.name] = group
                updates.append(UpdateGroup(entity: entity, rows: []))
            }
            rowIndex[change.id] = (group, updates[group].rows.count)
            updates[group].rows.append(row)
        }
        updates.sort { $0.entity.name < $1.entity.name }
    }

    private mutating func planDeletes(_ deletions: [ObjectDeletion]) throws {
        var index: [String: Int] = [:]
        var seen = Set<ManagedObjectID>()
        for deletion in deletions where seen.insert(deletion.id).inserted {
            let entity = try model.entity(deletion.id.entityName)
            guard let key = deletion.id.primaryKey else {
                throw CVManagedStructError.invalidObject(message: "delete of \(deletion.id), which was never saved")
            }
            if let group = index[entity.name] {
                deletes[group].keys.append(key)
                deletes[group].versions.append(deletion.version)
            } else {
                index[entity.name] = deletes.count
                deletes.append(DeleteGroup(entity: entity, keys: [key], versions: [deletion.version]))
            }
        }
    }

    private mutating func planLinks(_ changes: [RelationshipChange]) throws {
        var index: [String: Int] = [:]
        // Per group, the position of each owner's change: a later change of the same owner replaces it.
        var ownerPositions: [[ManagedObjectID: Int]] = []
        for change in changes {
            let entity = try model.entity(change.owner.entityName)
            guard let relationship = entity.relationship(named: change.relationship) else {
                throw CVManagedStructError.unknownKey(entity: entity.name, key: change.relationship)
            }
            guard relationship.isToMany else {
                throw CVManagedStructError.invalidObject(
                    message:
                        "'\(entity.name).\(relationship.name)' is a to-one relationship; set it in the object's change")
            }
            // A change set carries every changed side; the links are written from the side that owns them (the
            // context changes both sides together).
            guard mapping.storage(of: relationship, in: entity) == .joinTable else { continue }
            for member in change.members where member.entityName != relationship.destination {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: relationship.name, expected: relationship.destination,
                    found: member.entityName)
            }
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

    /// A row whose changes were deferred (see ``Row/deferred``) with its values made: keys known, values
    /// coerced, the checks `makeRow` does done; a row without deferred changes as it is.
    ///
    /// - Throws: As ``init(mapping:changes:index:)``.
    func materialized(_ row: Row) throws -> Row {
        guard let first = row.deferred.first else { return row }
        let info = try index.entity(row.id.entityName)
        var made = try makeRow(first, entity: info)
        for change in row.deferred.dropFirst() {
            let next = try makeRow(change, entity: info)
            made.attributes.merge(next.attributes)
            made.toOne.merge(next.toOne) { $1 }
        }
        made.version = row.version
        made.unlessCurrent = row.unlessCurrent
        return made
    }

    /// A change as a row in its entity's layout: every key known, every value coerced to its column's type,
    /// the check PostgreSQL adds (NUL in text) done. Values that already have
    /// their attribute's type (the usual case) are the change's storage, shared rather than rebuilt.
    private func makeRow(_ change: ObjectChange, entity info: EntityIndex) throws -> Row {
        let entity = info.entity
        let (arranged, unknown) = change.attributes.arranged(as: info.layout)
        guard var attributes = arranged else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: unknown ?? "")
        }
        // By position, from the entity index's arrays: no attribute (its name, its default) is copied per
        // value; one is read only for a value that needs coercing or fails.
        let declared = entity.attributes
        let types = info.types
        // Required values (present, not null) were checked by `ChangeSet.validate(against:)`, which every
        // route runs before planning; what is left here is PostgreSQL's own rule (no NUL in text) and coercion.
        for position in types.indices {
            guard let value = attributes[at: position] else { continue }
            switch value {
            case .null:
                continue
            case .string(let text):
                try ValueCoercion.checkText(text, entity: entity.name, key: declared[position].name)
                if types[position] != .string {
                    attributes[at: position] = try coerced(value, declared[position], entity)
                }
            default:
                if value.type != types[position] {
                    attributes[at: position] = try coerced(value, declared[position], entity)
                }
            }
        }
        return Row(
            id: change.id, version: change.version, attributes: attributes, toOne: try toOneLinks(change, entity),
            unlessCurrent: change.unlessCurrent)
    }

    /// A value coerced to its attribute's column type.
    private func coerced(_ value: AttributeValue, _ attribute: Attribute, _ entity: Entity) throws -> AttributeValue {
        let coerced = try ValueCoercion.coerce(value, to: attribute, in: entity.name)
        if coerced.isNull && !attribute.isOptional {
            throw CVManagedStructError.missingValue(entity: entity.name, key: attribute.name)
        }
        return coerced
    }

    /// The owning to-one links of a change, checked.
    private func toOneLinks(_ change: ObjectChange, _ entity: Entity) throws -> [String: ManagedObjectID?] {
        var toOne: [String: ManagedObjectID?] = [:]
        for (key, target) in change.toOne {
            guard let relationship = entity.relationship(named: key), !relationship.isToMany else {
                throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
            }
            // Non-owning to-ones are written from their owning side; nothing to store here.
            guard mapping.storage(of: relationship, in: entity) == .foreignKey else { continue }
            if let target, target.entityName != relationship.destination {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: key, expected: relationship.destination, found: target.entityName)
            }
            toOne[key] = .some(target)
        }
        return toOne
    }
}
