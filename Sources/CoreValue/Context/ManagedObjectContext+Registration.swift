import Foundation

// Registration: stored rows become the context's objects, one per row, found again by ID.
extension ManagedObjectContext {
    /// Fetches rows by ID (in batches) and registers them.
    func fetchAndRegister(_ ids: [ManagedObjectID]) throws {
        var start = 0
        while start < ids.count {
            let batch = Array(ids[start..<min(start + Self.batchSize, ids.count)])
            let snapshots = try store.fetch(ids: batch)
            // Only when rows are missing: which ones (a set of every ID returned otherwise costs per row).
            if snapshots.count < batch.count {
                // A row asked for by a parent's name comes back named by its own entity.
                let found = Set(snapshots.map { hierarchyID($0.id) })
                for id in batch where !found.contains(hierarchyID(id)) { missingIDs.insert(id) }
            }
            // Each entity's run of rows registered at once (with its registry taken out once); rows of one
            // entity (the usual case) are handed over whole, not copied.
            let runs = snapshots.runs(by: \.id.entityName)
            if runs.count == 1, let first = snapshots.first {
                _ = try register(snapshots, of: try index.entity(first.id.entityName))
            } else {
                for run in runs {
                    _ = try register(
                        Array(snapshots[run]), of: try index.entity(snapshots[run.lowerBound].id.entityName))
                }
            }
            start += Self.batchSize
        }
    }

    /// The object for a stored row: the registered one (refreshed when it has no unsaved changes) or a new one.
    func register(_ snapshot: RowSnapshot, of known: EntityIndex? = nil) throws -> ManagedObject {
        // A fetch's rows are of the entity it asked for: no lookup by name per row.
        let info =
            if let known, known.name == snapshot.id.entityName { known } else {
                try index.entity(snapshot.id.entityName)
            }
        // The entity's registry taken out of the dictionary while it changes, so that it is not copied.
        var objects = registry.take(info)
        defer { registry.put(objects, for: info) }
        return register(snapshot, info, in: &objects)
    }

    /// The objects for a fetch's rows of one entity, in order, as ``register(_:of:)`` makes them one by one,
    /// with the entity's registry taken out once for all the rows rather than once per row.
    /// `fresh`: whether none of the entity's objects was registered before this fetch (its first part
    /// decides when `nil`), so that every row makes a new object.
    func register(_ snapshots: consuming [RowSnapshot], of info: EntityIndex, fresh: Bool? = nil) throws
        -> [ManagedObject]
    {
        reserveCapacity(snapshots.count, of: info, fetched: true)
        var objects = registry.take(info)
        defer { registry.put(objects, for: info) }
        // With none of the entity's objects registered before, every row makes a new one: one hash per row.
        let fresh = fresh ?? objects.isEmpty
        if snapshots.count == 1, snapshots[0].id.entityName == info.name {
            // One row (a request's read by identifier) is read in place: moving it out would copy the array,
            // which the caller's part still holds.
            let snapshot = snapshots[0]
            return [fresh ? registerNew(snapshot, info, in: &objects) : register(snapshot, info, in: &objects)]
        }
        var result: [ManagedObject] = []
        result.reserveCapacity(snapshots.count)
        // Each row is moved out of the array, last first (reading rows in place or by `for in` copied each one
        // out, retaining and releasing its every value); the objects are put back in row order after. The rows
        // have distinct IDs and unique values, so the order they register and join the unique index in is not
        // observable.
        var rows = snapshots
        while let snapshot = rows.popLast() {
            if snapshot.id.entityName == info.name {
                result.append(
                    fresh ? registerNew(snapshot, info, in: &objects) : register(snapshot, info, in: &objects))
            } else {
                // Another entity's row (no store returns one): registered in that entity's registry.
                let other = try index.entity(snapshot.id.entityName)
                result.append(register(snapshot, other, in: &registry[other, default: [:]]))
            }
        }
        result.reverse()
        return result
    }

    private func register(
        _ snapshot: RowSnapshot, _ info: EntityIndex, in objects: inout [ManagedObjectID: ManagedObject]
    ) -> ManagedObject {
        if let object = objects[snapshot.id] {
            // An object a unique struct wrote is pending even when no value changed (its save is the last
            // write): a fetch must not reload it, or its version would move and the write be skipped.
            if !object.hasPendingWrite {
                dropUnique(object)
                load(snapshot, into: object)
            }
            return object
        }
        let object = ManagedObject(info: info, objectID: snapshot.id, handle: handle)
        load(snapshot, into: object)
        objects[snapshot.id] = object
        if !missingIDs.isEmpty { missingIDs.remove(snapshot.id) }
        return object
    }

    /// ``register(_:_:in:)`` for a row whose ID is probably not registered yet: inserts first, and only a row
    /// whose ID the registry already holds (a store that returned a row twice) takes the registered object.
    private func registerNew(
        _ snapshot: RowSnapshot, _ info: EntityIndex, in objects: inout [ManagedObjectID: ManagedObject]
    ) -> ManagedObject {
        let object = ManagedObject(info: info, objectID: snapshot.id, handle: handle)
        guard let registered = objects.updateValue(object, forKey: snapshot.id) else {
            load(snapshot, into: object)
            if !missingIDs.isEmpty { missingIDs.remove(snapshot.id) }
            return object
        }
        objects[snapshot.id] = registered
        return register(snapshot, info, in: &objects)
    }

    private func load(_ snapshot: RowSnapshot, into object: ManagedObject) {
        object.loadAttributes(from: snapshot)
        if !object.info.uniquePositions.isEmpty { unindexed.append(object) }
        // An entity without relationships leaves `links` untouched: not even read (a dynamic exclusivity
        // check per fetched row).
        let entity = object.info.entity
        guard !entity.relationships.isEmpty else { return }
        if object.links.isEmpty { object.links.reserveCapacity(entity.relationships.count) }
        for relationship in entity.relationships {
            if relationship.isToMany {
                object.links[relationship.name] = (snapshot.toMany[relationship.name] ?? []).map(Link.key)
            } else if let key = snapshot.toOne[relationship.name] ?? nil {
                object.links[relationship.name] = [.key(key)]
            } else {
                object.links[relationship.name] = []
            }
        }
    }
}
