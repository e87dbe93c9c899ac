extension HistoryChange {
    /// What a committed change set did, object by object, as history records it: inserts (upserts count as
    /// updates), then updates (with the attributes and relationships written, member lists included), then
    /// deletes with their `tombstones`. An update sent "unless current" that found its row current wrote
    /// nothing and is left out. Each object's version is the one `result` gives it.
    ///
    /// A bulk save's objects all write every attribute of one layout: their name lists are one shared array,
    /// sorted once (see ``PropertyNames``).
    @_spi(StoreImplementation) public static func changes(
        of changes: ChangeSet, result: SaveResult, tombstones: [ManagedObjectID: [String: AttributeValue]] = [:]
    ) -> [HistoryChange] {
        var names = PropertyNames()
        var inserts: [HistoryChange] = []
        var updates: [HistoryChange] = []
        // Where an object's update is in `updates`, for one written twice: an owner whose member list changed
        // as well (a context sends each object once otherwise, so without member lists nothing is looked up).
        var updatePosition: [ManagedObjectID: Int] = [:]
        let mayRepeat = !changes.relationships.isEmpty
        func update(_ id: ManagedObjectID, _ properties: [String], version: Int64?) {
            if mayRepeat, let position = updatePosition[id] {
                let merged = Set(updates[position].updatedProperties).union(properties)
                updates[position].updatedProperties = merged.sorted()
                return
            }
            if mayRepeat { updatePosition[id] = updates.count }
            updates.append(HistoryChange(kind: .update, objectID: id, updatedProperties: properties, version: version))
        }
        inserts.reserveCapacity(changes.inserts.count)
        var inserted = Set<ManagedObjectID>()
        for (position, insert) in changes.inserts.enumerated() {
            // By stream position for a streamed save: no table of IDs is built for it.
            guard let (id, version) = result.saved(insert: insert.id, at: position) else { continue }
            if insert.upsertKey == nil {
                if mayRepeat { inserted.insert(id) }
                inserts.append(HistoryChange(kind: .insert, objectID: id, version: version))
            } else {
                update(id, names.of(insert), version: version)
            }
        }
        for change in changes.updates where !change.unlessCurrent || result.versions[change.id] != nil {
            update(change.id, names.of(change), version: result.versions[change.id])
        }
        // A temporary owner is one of the inserts (found by position when the result is by position).
        var insertPosition: [ManagedObjectID: Int] = [:]
        if mayRepeat, !result.streamedInserts.isEmpty {
            for (position, insert) in changes.inserts.enumerated() { insertPosition[insert.id] = position }
        }
        func ownerID(_ id: ManagedObjectID) -> ManagedObjectID? {
            result.saved(insert: id, at: insertPosition[id] ?? .max)?.id
        }
        for change in changes.relationships {
            let owner = change.owner.isTemporary ? ownerID(change.owner) : change.owner
            if let owner, !inserted.contains(owner) {
                update(owner, [change.relationship], version: result.versions[owner])
            }
        }
        let deletes = changes.deletes.map {
            HistoryChange(kind: .delete, objectID: $0.id, tombstone: tombstones[$0.id] ?? [:])
        }
        return inserts + updates + deletes
    }

    /// The names of the attributes a delete of `entity` keeps in its tombstone: the unique ones and those
    /// marked ``Attribute/preservesValueAfterDeletion``.
    @_spi(StoreImplementation) public static func tombstoneAttributes(of entity: Entity) -> [String] {
        entity.attributes.filter { $0.isUnique || $0.preservesValueAfterDeletion }.map(\.name)
    }
}

/// The sorted names an object change wrote. A change with every attribute of its layout and no to-one
/// links (every object of a bulk upsert) gets the layout's names, sorted once and shared.
private struct PropertyNames {
    private var layout: AttributeLayout?
    private var sorted: [String] = []

    mutating func of(_ change: ObjectChange) -> [String] {
        let attributes = change.attributes
        guard attributes.isComplete, change.toOne.isEmpty else {
            return Set(attributes.keys).union(change.toOne.keys).sorted()
        }
        if let layout, layout.hasSameNames(as: attributes.layout) { return sorted }
        layout = attributes.layout
        sorted = attributes.keys.sorted()
        return sorted
    }
}
