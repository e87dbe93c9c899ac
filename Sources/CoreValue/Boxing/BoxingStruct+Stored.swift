extension BoxingStruct {
    /// The stored structs of type `T` matching a predicate, read straight from the store, without a context:
    /// the fast path for reads that only want values.
    ///
    /// It differs from ``query(_:predicate:sortDescriptors:fetchLimit:fetchOffset:)-96q1n`` in two ways. No
    /// context's unsaved changes are seen: the structs are the rows as committed. And no object is registered
    /// anywhere, so nothing is kept after the call and no identity map is kept up: each row is unboxed from a
    /// short-lived object of its own. The structs still carry their `objectID`, so saving one later through a
    /// context updates its row.
    ///
    /// For an entity with relationships the call reads through a context of its own instead (relationships
    /// are loaded through a context), with the same result as `query` on a fresh context.
    ///
    /// ```swift
    /// let adults: [Person] = try Person.queryStored(store, predicate: .key("age") >= 18)
    /// ```
    ///
    /// - Throws: ``CVManagedStructError`` for an unknown entity, key or value type in the predicate; the
    ///   store's errors; unboxing errors.
    public static func queryStored<T: UnboxingStruct>(
        _ store: any Store,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int? = nil,
        fetchOffset: Int = 0
    ) throws -> [T] where T.StructureType == T {
        let request = try FetchRequest(
            entityName: EntityName, predicate: predicate, sortDescriptors: sortDescriptors ?? [],
            fetchLimit: fetchLimit, fetchOffset: fetchOffset
        ).validated(in: store.model)
        let info = EntityIndex(try store.model.entity(request.entityName), in: store.model)
        guard info.entity.relationships.isEmpty else {
            // Kept in a local until every struct is unboxed: its objects load their relationships through it.
            let context = ManagedObjectContext(store: store)
            return try withExtendedLifetime(context) {
                try query(
                    context, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                    fetchOffset: fetchOffset)
            }
        }
        let snapshots = try store.fetch(request)
        var structs: [T] = []
        structs.reserveCapacity(snapshots.count)
        // One ephemeral object carries row after row: a struct holds values, not its object, so the next
        // row may reuse it. Should `fromObject` have kept it, the next row gets a new one.
        var object = ManagedObject(info: info, objectID: .temporary(info.name), handle: nil)
        for snapshot in snapshots {
            if !isKnownUniquelyReferenced(&object) {
                object = ManagedObject(info: info, objectID: snapshot.id, handle: nil)
            }
            object.objectID = snapshot.id
            object.loadAttributes(from: snapshot)
            structs.append(try T.unbox(.object(object)))
        }
        return structs
    }
}
