extension ManagedObjectContext {
    /// The objects matching a request, including the context's unsaved changes.
    ///
    /// When the entity has no pending changes, the store answers the request as is. Otherwise the store's
    /// matches (without the window) are merged with the pending inserted and changed objects, the predicate
    /// is evaluated in memory on the current values, deleted objects are dropped, and the result is sorted
    /// (ties by primary key, unsaved objects last in insertion order) and windowed.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, ``CVManagedStructError/unknownKey(entity:key:)``
    ///   or ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` before any store call, or the
    ///   store's error.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let request = try request.validated(in: model)
        let info = try index.entity(request.entityName)
        let pending = pendingObjects(of: info.name)
        guard !pending.isEmpty || deletedList.contains(where: { $0.info.name == info.name }) else {
            return try store.fetch(request).map { try register($0) }
        }
        var unwindowed = request
        unwindowed.fetchLimit = nil
        unwindowed.fetchOffset = 0
        var candidates: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for snapshot in try store.fetch(unwindowed) {
            let object = try register(snapshot)
            if seen.insert(ObjectIdentifier(object)).inserted { candidates.append(object) }
        }
        for object in pending where seen.insert(ObjectIdentifier(object)).inserted { candidates.append(object) }
        var matching = candidates.filter { !$0.isDeletedFlag && matches(request.predicate, $0) }
        let order = Dictionary(
            insertedList.enumerated().map { (ObjectIdentifier($1), $0) }, uniquingKeysWith: { first, _ in first })
        matching.sort { lhs, rhs in
            for sort in request.sortDescriptors {
                let result = ValueOrder.sortOrder(
                    lhs.attributes[sort.key] ?? .null, rhs.attributes[sort.key] ?? .null, ascending: sort.ascending)
                if result != 0 { return result < 0 }
            }
            switch (lhs.objectID.primaryKey, rhs.objectID.primaryKey) {
            case (let left?, let right?): return left < right
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return (order[ObjectIdentifier(lhs)] ?? 0) < (order[ObjectIdentifier(rhs)] ?? 0)
            }
        }
        return Array(matching.dropFirst(request.fetchOffset).prefix(request.fetchLimit ?? Int.max))
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

    /// Inserted and changed objects of an entity.
    private func pendingObjects(of entityName: String) -> [ManagedObject] {
        insertedList.filter { $0.info.name == entityName && !$0.isDeletedFlag }
            + changedList.filter { $0.info.name == entityName && $0.hasChanges }
    }
}
