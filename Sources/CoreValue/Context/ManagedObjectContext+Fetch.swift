extension ManagedObjectContext {
    /// The objects matching a request, including the context's unsaved changes.
    ///
    /// When the entity has no pending changes, the store answers the request as is. Otherwise the store's
    /// first `offset + limit + k` matches (k: the entity's changed and deleted objects, each of which can
    /// drop one stored row out of the window) are merged with the pending inserted and changed objects, the
    /// predicate is evaluated in memory on the current values, deleted objects are dropped, and the result is
    /// sorted (ties by primary key, unsaved objects last in insertion order) and windowed. Only the pending
    /// objects of the request's entity are looked at.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, ``CVManagedStructError/unknownKey(entity:key:)``
    ///   or ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` before any store call, or the
    ///   store's error.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let request = try request.validated(in: model)
        let info = try index.entity(request.entityName)
        let inserted = pendingInserts.of(info.name)
        let changed = pendingChanges.of(info.name).filter(\.hasChanges)
        let deletedCount = pendingDeletes.of(info.name).count
        guard inserted.contains(where: { !$0.isDeletedFlag }) || !changed.isEmpty || deletedCount > 0 else {
            let snapshots = try store.fetch(request)
            reserveCapacity(snapshots.count, of: info)
            return try snapshots.map { try register($0) }
        }
        var widened = request
        widened.fetchLimit = request.fetchLimit.map { request.fetchOffset + $0 + changed.count + deletedCount }
        widened.fetchOffset = 0
        // Matches with the position they were found at: stored rows, changed objects, then inserted objects in
        // insertion order (which orders unsaved objects among themselves).
        var matching: [(object: ManagedObject, position: Int)] = []
        var seen = Set<ObjectIdentifier>()
        func consider(_ object: ManagedObject) {
            if !object.isDeletedFlag, matches(request.predicate, object) { matching.append((object, matching.count)) }
        }
        for snapshot in try store.fetch(widened) {
            let object = try register(snapshot)
            if seen.insert(ObjectIdentifier(object)).inserted { consider(object) }
        }
        for object in changed where seen.insert(ObjectIdentifier(object)).inserted { consider(object) }
        // Inserted objects have temporary IDs: no stored row can be one of them.
        for object in inserted { consider(object) }
        matching.sort { lhs, rhs in
            for sort in request.sortDescriptors {
                let result = ValueOrder.sortOrder(
                    lhs.object.attributes[sort.key] ?? .null, rhs.object.attributes[sort.key] ?? .null,
                    ascending: sort.ascending)
                if result != 0 { return result < 0 }
            }
            switch (lhs.object.objectID.primaryKey, rhs.object.objectID.primaryKey) {
            case (let left?, let right?): return left < right
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return lhs.position < rhs.position
            }
        }
        return matching.dropFirst(request.fetchOffset).prefix(request.fetchLimit ?? Int.max).map(\.object)
    }

    /// Whether an object matches a validated predicate on its current, unsaved values.
    func matches(_ predicate: CVPredicate?, _ object: ManagedObject) -> Bool {
        guard let predicate else { return true }
        return PredicateEvaluator.matches(
            predicate, attribute: { object.attributes[$0] ?? .null },
            isNull: { key in
                if object.info.attributes[key] != nil { return (object.attributes[key] ?? .null).isNull }
                return !(object.links[key] ?? []).contains { link in
                    if case .object(let linked) = link { return !linked.isDeletedFlag }
                    return true
                }
            })
    }
}
