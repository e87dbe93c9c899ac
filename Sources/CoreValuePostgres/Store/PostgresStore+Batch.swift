@_spi(StoreImplementation) import CoreValue
import LibPQ

extension PostgresStore {
    /// A batch update in one `UPDATE` statement, in a transaction of its own through the store's one write
    /// route (retried after a serialization failure or a failover as a save is; with a
    /// ``notificationChannel`` its change notification lists the rows, or the entity alone past the payload
    /// limit).
    ///
    /// - Throws: ``PostgresStoreError/Code/readOnlyStore`` for a read-only store and the request's
    ///   validation errors, before anything is sent; as ``apply(_:)`` otherwise.
    @_spi(StoreImplementation) public func batchUpdate(_ request: BatchUpdateRequest) throws -> BatchResult {
        try requireWritable()
        let request = try request.validated(in: model)
        let entity = try model.entity(request.entityName)
        // A hierarchy's rows are updated as a change set over the rows fetched per entity: each keeps its own
        // entity, and the update statements filter on nothing they need not.
        if mapping.isHierarchical(entity.name) { return try batchUpdateFetchedRows(request) }
        let listsRows = request.returnsObjectIDs || writesAfterChanges
        let sql = try fetchStatements.batchUpdate(request, entity: entity, returning: listsRows)
        let assigned = request.values.keys.sorted()
        let attribution = HistoryAttribution(author: request.transactionAuthor, name: request.transactionName)
        let outcome = try write(attribution: attribution) { _ in
            .batch(sql, entity: entity.name, listsRows: listsRows, assigned: assigned)
        }
        guard request.returnsObjectIDs else { return BatchResult(count: outcome.batchCount) }
        let ids = outcome.result.versions.keys.inKeyOrder()
        return BatchResult(count: outcome.batchCount, objectIDs: ids)
    }

    /// A batch delete: in one statement (after one check per `deny` relationship) when the database can apply
    /// the entity's delete rules (see `FetchStatements.batchDelete(_:entity:listsRows:)`), through the store's one
    /// write route; otherwise through a context (the objects fetched, deleted with the context's rules, saved
    /// in one transaction). A notification lists every row deleted, cascades included; rows whose links a
    /// nullify cleared are not listed, and their versions stay.
    ///
    /// - Throws: ``PostgresStoreError/Code/readOnlyStore`` and the request's validation errors before anything
    ///   is sent; `CVManagedStructError.constraintViolation` naming a `deny` relationship with related rows
    ///   left, with nothing deleted; as ``apply(_:)`` otherwise.
    @_spi(StoreImplementation) public func batchDelete(_ request: BatchDeleteRequest) throws -> BatchResult {
        try requireWritable()
        let request = try request.validated(in: model)
        let entity = try model.entity(request.entityName)
        let listsRows = request.returnsObjectIDs || writesAfterChanges
        // A hierarchy's rows are deleted through a context, which reads each row as its own entity.
        guard !mapping.isHierarchical(entity.name),
            let deletion = try fetchStatements.batchDelete(request, entity: entity, listsRows: listsRows)
        else {
            return try request.runThroughContext(on: self)
        }
        let attribution = HistoryAttribution(author: request.transactionAuthor, name: request.transactionName)
        let outcome = try write(attribution: attribution) { _ in .batchDelete(deletion) }
        guard request.returnsObjectIDs else { return BatchResult(count: outcome.batchCount) }
        let ids = outcome.notified.deletes.map(\.id).filter { $0.entityName == entity.name }.inKeyOrder()
        return BatchResult(count: outcome.batchCount, objectIDs: ids)
    }
}
