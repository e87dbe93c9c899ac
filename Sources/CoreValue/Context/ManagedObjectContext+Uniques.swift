// The context's unique index: the registered object holding each unique attribute value, looked up when a
// unique struct is boxed and kept current as values change.
extension ManagedObjectContext {
    /// The registered, not deleted object holding each unique attribute value.
    ///
    /// Objects a fetch registers join it on its next use, in the order they were registered (``unindexed``):
    /// most fetched objects are only read, and are never looked up by a unique value.
    var uniqueIndex: [UniqueValue: ManagedObject] {
        _read {
            indexRegistered()
            yield tables.uniqueIndex
        }
        _modify {
            indexRegistered()
            yield &tables.uniqueIndex
        }
    }
    /// Objects of entities with unique attributes that a fetch registered and ``uniqueIndex`` does not hold yet.
    var unindexed: [ManagedObject] {
        _read { yield tables.unindexed }
        _modify { yield &tables.unindexed }
    }
    /// The bulk save in progress when it makes `info`'s objects.
    func bulkInsert(of info: EntityIndex) -> BulkInsert? {
        guard let bulkInsert, bulkInsert.entity == info.number else { return nil }
        return bulkInsert
    }

    /// Adds the objects a fetch registered to the unique index, in registration order, as if each had been
    /// added when it was registered: every use of the index comes after this.
    fileprivate func indexRegistered() {
        guard !unindexed.isEmpty else { return }
        let objects = unindexed
        unindexed = []
        tables.uniqueIndex.reserveGrowing(tables.uniqueIndex.count + objects.count)
        for object in objects { addUnique(object) }
    }

    /// The registered, not deleted object of an entity whose unique attribute `key` has `value`.
    func uniqueObject(_ info: EntityIndex, _ key: String, _ value: AttributeValue) -> ManagedObject? {
        guard let unique = UniqueValue(info, key, value) else { return nil }
        // A bulk save's entity has no other object here (see `BulkInsert`).
        if let bulk = bulkInsert(of: info) { return bulk.uniques[unique] }
        if tables.uniqueIndex.isEmpty, unindexed.count <= Self.unindexedScanLimit {
            return unindexedObject(unique)
        }
        return uniqueIndex[unique]
    }

    /// How many objects waiting to be indexed ``uniqueObject(_:_:_:)`` compares one by one while the index is
    /// empty, rather than indexing them first: a request reads an object and saves it as a struct, which looks
    /// it up by its unique value, and building the index for that one lookup cost more than comparing.
    static let unindexedScanLimit = 4

    /// The object ``uniqueIndex`` would hold for `unique` once the objects waiting were indexed (and it held no
    /// other): the last of them, not deleted, whose current value matches (indexing skips nulls, and a later
    /// object replaces an earlier one).
    private func unindexedObject(_ unique: UniqueValue) -> ManagedObject? {
        let position = Int(unique.position)
        for object in unindexed.reversed() where !object.isDeletedFlag && object.info.number == unique.entity {
            let value = object.attribute(at: position) ?? .null
            if !value.isNull, UniqueValue(object.info, at: position, value) == unique { return object }
        }
        return nil
    }

    /// Puts objects into the unique index on its next use (as objects a fetch registers).
    func indexLater(_ objects: [ManagedObject]) {
        guard let first = objects.first, !first.info.uniquePositions.isEmpty else { return }
        unindexed.reserveGrowing(unindexed.count + objects.count)
        for object in objects where !object.isDeletedFlag { unindexed.append(object) }
    }
}

/// A unique attribute value of an entity: the key of a context's unique index.
///
/// Strings compare by their exact bytes, as the database's UNIQUE constraint does (``ExactValue``).
struct UniqueValue: Hashable {
    /// The entity (``EntityIndex/number``) and the attribute's position in its layout: two integers, so
    /// that building, hashing and comparing a key retains and compares no name.
    let entity: Int32
    let position: Int32
    let value: ExactValue

    init(_ info: EntityIndex, at position: Int, _ value: AttributeValue) {
        self.entity = info.number
        self.position = Int32(truncatingIfNeeded: position)
        self.value = ExactValue(value)
    }

    /// The key of attribute `key`, or `nil` when the entity has no such attribute.
    init?(_ info: EntityIndex, _ key: String, _ value: AttributeValue) {
        // The key is nearly always one of the entity's few unique attributes: compared with their names
        // before the name is hashed for the layout's table (boxing asks this twice per unique struct).
        guard let position = try? info.uniquePosition(key) else { return nil }
        self.init(info, at: position, value)
    }

    /// Hashes the value alone: entity and key rarely tell two entries apart, and equality still compares them.
    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
