extension ManagedObjectContext {
    /// The results of an aggregate: one per group, in group order (each group value ascending, nulls last);
    /// without grouping exactly one, also when no row matches. Includes the context's unsaved changes, as
    /// `count(for:)` does: one statement when the entity has none, otherwise the matching objects of
    /// `fetch(_:)` folded in memory.
    ///
    /// Nulls as in SQL: left out of every function but ``AggregateFunction/countRows``, and a sum, mean,
    /// minimum or maximum of no non-null value is `.null`, not zero.
    ///
    /// - Throws: Before anything is sent: ``CVManagedStructError/unknownEntity(_:)``,
    ///   ``CVManagedStructError/unknownKey(entity:key:)``,
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for a function the attribute's type
    ///   has no meaning for, the predicate's validation errors. ``CVManagedStructError/Code/aggregateOverflow``
    ///   for an integer sum beyond `Int64`; the store's errors.
    public func aggregate(_ request: AggregateRequest) throws -> [AggregateRow] {
        let entity = try model.entity(request.entityName)
        var checked = request
        checked.predicate = try request.predicate?.validated(for: entity, in: model)
        var aggregator = try Aggregator(checked, entity: entity)
        let info = try index.entity(request.entityName)
        guard hasPendingChanges(of: info) else { return try refined.aggregate(checked) }
        let objects = try fetchValidated(FetchRequest(entityName: entity.name, predicate: checked.predicate), info)
        for object in objects {
            aggregator.add(object.attributeValues)
        }
        return try aggregator.rows()
    }

    /// The results of an aggregate, like `aggregate(_:)`, without blocking a thread of the
    /// cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func aggregate(_ request: AggregateRequest) async throws -> [AggregateRow] {
        try await performBlocking { try self.aggregate(request) }
    }
}
