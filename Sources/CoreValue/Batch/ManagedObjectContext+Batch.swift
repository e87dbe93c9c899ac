extension ManagedObjectContext {
    /// Sets the same values on every stored object a predicate matches, in one statement, without fetching
    /// them (Core Data's batch update request).
    ///
    /// The store writes the rows only: the context's unsaved changes are neither written nor matched. Each
    /// row moves to its next version, so an object another context read before conflicts when saved later.
    /// Afterwards this context's registered objects of the entity are read again (one statement), except those
    /// with unsaved changes, which keep them (their save then conflicts, as any stale save does; a unique
    /// struct's save still wins, as its saves always do). Core Data leaves the merge to you; here it is done.
    ///
    /// ```swift
    /// let result = try context.batchUpdate(
    ///     BatchUpdateRequest(entityName: "Account", predicate: .key("seenAt") < cutoff, values: ["active": .bool(false)]))
    /// print(result.count)
    /// ```
    ///
    /// - Throws: Before anything is sent: the request's validation errors (see ``BatchUpdateRequest``); then
    ///   the store's errors, with nothing written.
    public func batchUpdate(_ request: BatchUpdateRequest) throws -> BatchResult {
        var request = try request.validated(in: model)
        request.transactionAuthor = request.transactionAuthor ?? transactionAuthor
        request.transactionName = request.transactionName ?? transactionName
        let result = try refined.batchUpdate(request)
        try refreshRegistered(of: [request.entityName])
        return result
    }

    /// `batchUpdate(_:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func batchUpdate(_ request: BatchUpdateRequest) async throws -> BatchResult {
        try await performBlocking { try self.batchUpdate(request) }
    }

    /// Deletes every stored object a predicate matches, with the entity's delete rules, without fetching them
    /// into this context (Core Data's batch delete request).
    ///
    /// On PostgreSQL one statement deletes the rows and the rows their `cascade` relationships reach, at any
    /// depth, as long as each entity is reached once; every `deny` relationship of a row deleted is checked
    /// first, in the same transaction. Cascades that come back to an entity (a tree of one entity) and
    /// ``MemoryStore`` go through a context of the store's own: the objects fetched, deleted with the rules,
    /// saved in one transaction. The context's unsaved changes are neither
    /// written nor matched. Afterwards this context reads its registered objects of the entity, and of every
    /// entity related to it, again: those whose rows are gone are forgotten (marked deleted and unregistered),
    /// the others take the rows' current values and links; objects with unsaved changes keep them.
    ///
    /// - Throws: Before anything is sent: ``CVManagedStructError/unknownEntity(_:)`` and the predicate's
    ///   errors. ``CVManagedStructError/constraintViolation(entity:key:message:)`` naming a `deny`
    ///   relationship that still has related rows, with nothing deleted; the store's errors.
    public func batchDelete(_ request: BatchDeleteRequest) throws -> BatchResult {
        var request = try request.validated(in: model)
        request.transactionAuthor = request.transactionAuthor ?? transactionAuthor
        request.transactionName = request.transactionName ?? transactionName
        let result = try refined.batchDelete(request)
        try refreshRegistered(of: try relatedEntities(of: request.entityName))
        return result
    }

    /// `batchDelete(_:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func batchDelete(_ request: BatchDeleteRequest) async throws -> BatchResult {
        try await performBlocking { try self.batchDelete(request) }
    }

    /// The entity and every entity its relationships reach, directly or not (a cascade may delete rows of
    /// any of them, and a nullify change their links), each once, walked without recursion.
    private func relatedEntities(of name: String) throws -> [String] {
        var seen: Set<String> = [name]
        var order = [name]
        var next = 0
        while next < order.count {
            for relationship in try model.entity(order[next]).relationships
            where seen.insert(relationship.destination).inserted {
                order.append(relationship.destination)
            }
            next += 1
        }
        return order
    }

    /// Reads the registered stored objects of these entities again, but those with unsaved writes, in one
    /// fetch by ID (``fetchAndRegister(_:)``, which refreshes what it reads); those whose rows are gone are
    /// forgotten.
    private func refreshRegistered(of entities: [String]) throws {
        let stale = entities.flatMap { name in
            registeredObjects(entityName: name).filter { !$0.hasPendingWrite && !$0.objectID.isTemporary }
        }
        guard !stale.isEmpty else { return }
        try fetchAndRegister(stale.map(\.objectID))
        for object in stale where missingIDs.contains(object.objectID) {
            dropUnique(object)
            object.isDeletedFlag = true
            registry.remove(object)
        }
    }
}
