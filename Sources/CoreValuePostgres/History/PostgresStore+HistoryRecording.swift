@_spi(StoreImplementation) import CoreValue
import LibPQ

// The write side of history: what `PostgresStore.write` adds to a transaction when the store records it.
extension PostgresStore {
    /// Whether a write transaction's statements end in something other than its last write (a change
    /// notification, a history record), so that `COMMIT` cannot go with that write.
    var writesAfterChanges: Bool { notificationChannel != nil || configuration.recordsHistory }

    /// The tombstones of a strategy's deletes (a context's save; a batch delete records none), read and
    /// locked before the deletes run: one statement per entity whose deletes keep values.
    func tombstones(for strategy: WriteStrategy, _ runner: StatementRunner) throws
        -> [ManagedObjectID: [String: AttributeValue]]
    {
        guard case .statements(_, let changes) = strategy, !changes.deletes.isEmpty else { return [:] }
        var result: [ManagedObjectID: [String: AttributeValue]] = [:]
        let statements = HistoryStatements(schema: configuration.schema)
        let byEntity = Dictionary(grouping: changes.deletes.compactMap { $0.id.primaryKey == nil ? nil : $0.id }) {
            $0.entityName
        }
        for (name, ids) in byEntity.sorted(by: { $0.key < $1.key }) {
            let entity = try index.entity(name).entity
            let names = HistoryChange.tombstoneAttributes(of: entity)
            guard !names.isEmpty else { continue }
            let types = try names.map { try index.entity(name).attribute($0).type }
            let rows = try runner.run(
                statements.tombstones(
                    of: mapping.tableName(of: name), attributes: names, keys: ids.compactMap(\.primaryKey)))
            for row in 0..<rows.rowCount {
                let key = try rows.decode(Int64.self, row: row, column: 0)
                var values: [String: AttributeValue] = [:]
                for (column, attribute) in names.enumerated() {
                    values[attribute] = try BindEncoding.attributeValue(
                        rows, row: row, column: column + 1, type: types[column])
                }
                result[.permanent(name, key)] = values
            }
        }
        return result
    }

    /// The statement that records a transaction's changes in the history table (its last before `COMMIT`,
    /// or before the notification), or `nil` when it changed nothing.
    func historyRecord(
        _ outcome: WriteOutcome, tombstones: [ManagedObjectID: [String: AttributeValue]],
        attribution: HistoryAttribution
    ) -> SQL? {
        // By stream position for a streamed save (`saved(insert:at:)`), without tabulating its result.
        let changes = HistoryChange.changes(of: outcome.notified, result: outcome.result, tombstones: tombstones)
        guard !changes.isEmpty else { return nil }
        let record = HistoryRecord(
            author: outcome.notified.transactionAuthor ?? attribution.author ?? configuration.historyAuthor,
            name: outcome.notified.transactionName ?? attribution.name, changes: changes)
        return HistoryStatements(schema: configuration.schema).record(record)
    }
}

/// Who a write is by and its name, for a write whose change set carries neither (a batch request's).
struct HistoryAttribution {
    var author: String?
    var name: String?
}
