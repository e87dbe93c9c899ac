extension HistoryChange {
    /// What a committed change set did, object by object, as history records it: inserts (upserts count as
    /// updates), then updates (with the attributes and relationships written, member lists included), then
    /// deletes with their `tombstones`. An update sent "unless current" that found its row current wrote
    /// nothing and is left out.
    @_spi(StoreImplementation) public static func changes(
        of changes: ChangeSet, result: SaveResult, tombstones: [ManagedObjectID: [String: AttributeValue]] = [:]
    ) -> [HistoryChange] {
        var inserts: [HistoryChange] = []
        var updated: [ManagedObjectID: Set<String>] = [:]
        var updateOrder: [ManagedObjectID] = []
        func update(_ id: ManagedObjectID, _ names: some Sequence<String>) {
            if updated[id] == nil { updateOrder.append(id) }
            updated[id, default: []].formUnion(names)
        }
        var inserted = Set<ManagedObjectID>()
        for insert in changes.inserts {
            guard let id = result.permanentIDs[insert.id] else { continue }
            if insert.upsertKey == nil {
                inserted.insert(id)
                inserts.append(HistoryChange(kind: .insert, objectID: id, version: result.versions[id]))
            } else {
                update(id, insert.attributes.keys + insert.toOne.keys)
            }
        }
        for change in changes.updates where !change.unlessCurrent || result.versions[change.id] != nil {
            update(change.id, change.attributes.keys + change.toOne.keys)
        }
        for change in changes.relationships {
            let owner = change.owner.isTemporary ? result.permanentIDs[change.owner] : change.owner
            if let owner, !inserted.contains(owner) { update(owner, [change.relationship]) }
        }
        let updates = updateOrder.map { id in
            HistoryChange(
                kind: .update, objectID: id, updatedProperties: (updated[id] ?? []).sorted(),
                version: result.versions[id])
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
