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
        let request = try request.validated(in: model)
        let result = try refined.batchUpdate(request)
        try refreshRegistered(of: try index.entity(request.entityName))
        return result
    }

    /// `batchUpdate(_:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func batchUpdate(_ request: BatchUpdateRequest) async throws -> BatchResult {
        try await performBlocking { try self.batchUpdate(request) }
    }

    /// Reads the registered stored objects of an entity again, but those with unsaved writes.
    private func refreshRegistered(of info: EntityIndex) throws {
        let stale = registeredObjects(entityName: info.name).filter { !$0.hasPendingWrite && !$0.objectID.isTemporary }
        guard !stale.isEmpty else { return }
        let rows = try store.fetch(ids: stale.map(\.objectID))
        _ = try register(rows, of: info, fresh: false)
    }
}
