@_spi(StoreImplementation) import CoreValue
import LibPQ

extension PostgresStore {
    /// An aggregate in one statement (`FetchStatements.aggregate(_:entity:resultType:)`), read like a fetch
    /// (retried after a lost connection, within the stream's transaction when called from one).
    ///
    /// - Throws: ``CVManagedStructError/Code/aggregateOverflow`` when an integer sum does not fit in `Int64`
    ///   (the server's 22003); the request's validation errors before anything is sent; server errors.
    @_spi(StoreImplementation) public func aggregate(_ request: AggregateRequest) throws -> [AggregateRow] {
        let entity = try model.entity(request.entityName)
        // A hierarchy's rows are folded in memory over a fetch of the entity (and its subentities).
        if mapping.isHierarchical(entity.name) { return try aggregateFetchedRows(request) }
        var request = request
        request.predicate = try request.predicate?.validated(for: entity, in: model)
        let resultType = try request.resultType(in: entity)
        let groupTypes = request.groupBy.map { entity.attribute(named: $0)?.type ?? .string }
        let sql = try fetchStatements.aggregate(request, entity: entity, resultType: resultType)
        do {
            return try withReadRunner(needsTransaction: false) { runner in
                let result = try runner.run(sql)
                return try (0..<result.rowCount).map { row in
                    var group: [AttributeValue] = []
                    group.reserveCapacity(groupTypes.count)
                    for (column, type) in groupTypes.enumerated() {
                        group.append(try BindEncoding.attributeValue(result, row: row, column: column, type: type))
                    }
                    let value = try BindEncoding.attributeValue(
                        result, row: row, column: groupTypes.count, type: resultType)
                    return AggregateRow(group: group, value: value)
                }
            }
        } catch let error as PostgresStoreError where error.sqlState == .numericValueOutOfRange {
            throw CVManagedStructError.aggregateOverflow(
                entity: entity.name, key: request.key ?? "", function: "\(request.function)")
        }
    }
}
