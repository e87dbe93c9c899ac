/// A stored row of ``MemoryStore``: version, attributes and owned foreign keys.
struct MemoryRow {
    var version: Int64
    var attributes: AttributeValues
    var foreignKeys: [String: Int64]
}

/// The tables of a ``MemoryStore`` with an undo log, so that a failed apply restores exactly what it changed
/// (work proportional to the change, not to the tables).
struct MemoryState {
    /// Rows by entity, then primary key.
    private(set) var tables: [String: [Int64: MemoryRow]] = [:]
    /// Owned to-many links by "Entity.relationship", then owner key: the member keys in order.
    private(set) var joins: [String: [Int64: [Int64]]] = [:]
    /// The last primary key handed out per entity (an identity column never reuses keys).
    private(set) var lastKey: [String: Int64] = [:]
    /// Unique attribute values by "Entity.attribute", then value: the owning row.
    private(set) var unique: [String: [ExactValue: Int64]] = [:]

    private enum Undo {
        case row(String, Int64, MemoryRow?)
        case join(String, Int64, [Int64]?)
        case lastKey(String, Int64?)
        case unique(String, AttributeValue, Int64?)
    }

    private var log: [Undo] = []

    /// Starts recording changes.
    mutating func begin() { log.removeAll(keepingCapacity: true) }

    /// Undoes every change since ``begin()``.
    mutating func rollback() {
        for entry in log.reversed() {
            switch entry {
            case .row(let entity, let key, let row): tables[entity, default: [:]][key] = row
            case .join(let name, let owner, let members): joins[name, default: [:]][owner] = members
            case .lastKey(let entity, let key): lastKey[entity] = key
            case .unique(let name, let value, let key): unique[name, default: [:]][ExactValue(value)] = key
            }
        }
        log.removeAll()
    }

    /// The row of an entity with this key.
    func row(_ entity: String, _ key: Int64) -> MemoryRow? { tables[entity]?[key] }

    /// Whether a row exists.
    func exists(_ entity: String, _ key: Int64) -> Bool { tables[entity]?[key] != nil }

    /// The row `key` of `entity` or, in a hierarchy, of one of the entities whose objects are its objects,
    /// with the entity it belongs to. A hierarchy shares one key sequence, so at most one of them has it.
    func row(kindOf entity: EntityIndex, _ key: Int64) -> (entity: String, row: MemoryRow)? {
        if let row = tables[entity.name]?[key] { return (entity.name, row) }
        guard entity.isInHierarchy else { return nil }
        for kind in entity.kinds where kind != entity.name {
            if let row = tables[kind]?[key] { return (kind, row) }
        }
        return nil
    }

    /// Whether the row `key` of `entity` (or of one of its subentities) exists.
    func exists(kindOf entity: EntityIndex, _ key: Int64) -> Bool { row(kindOf: entity, key) != nil }

    /// Writes or removes a row.
    mutating func setRow(_ entity: String, _ key: Int64, _ row: MemoryRow?) {
        log.append(.row(entity, key, tables[entity]?[key]))
        tables[entity, default: [:]][key] = row
    }

    /// The members of one owner of an owned to-many relationship.
    func members(_ join: String, _ owner: Int64) -> [Int64]? { joins[join]?[owner] }

    /// Replaces or removes the members of an owner.
    mutating func setMembers(_ join: String, _ owner: Int64, _ members: [Int64]?) {
        log.append(.join(join, owner, joins[join]?[owner]))
        joins[join, default: [:]][owner] = members
    }

    /// A new primary key for an entity (a hierarchy's root: its entities share one sequence).
    mutating func nextKey(_ entity: String) -> Int64 {
        let previous = lastKey[entity]
        log.append(.lastKey(entity, previous))
        let key = (previous ?? 0) + 1
        lastKey[entity] = key
        return key
    }

    /// The row holding a unique value.
    func uniqueOwner(_ index: String, _ value: AttributeValue) -> Int64? { unique[index]?[ExactValue(value)] }

    /// Records or clears the row holding a unique value.
    mutating func setUniqueOwner(_ index: String, _ value: AttributeValue, _ key: Int64?) {
        log.append(.unique(index, value, unique[index]?[ExactValue(value)]))
        unique[index, default: [:]][ExactValue(value)] = key
    }
}
