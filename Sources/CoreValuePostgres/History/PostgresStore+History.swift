@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

extension PostgresStore: HistoryStore {
    /// Whether the store records every committed save (``Configuration/recordsHistory``).
    public var recordsHistory: Bool { configuration.recordsHistory }

    /// A token for now, from the history state row and the server's current snapshot: one statement.
    ///
    /// - Throws: `CVManagedStructError.historyUnavailable` when the store does not record history or the
    ///   history tables hold no state row; connection and server errors.
    public func currentHistoryToken() throws -> HistoryToken {
        let statements = try historyStatements()
        return try withReadRunner(needsTransaction: false) { runner in
            let result = try runner.run(statements.current)
            let (storeID, pruned) = try Self.state(result)
            // Pruned transactions count as read: their numbers may be above every one left.
            let highest = max(try result.decode(Int64.self, row: 0, column: 3), pruned?.number ?? 0)
            return HistoryToken(storeID: storeID, base: try Self.snapshot(result, column: 2), number: highest)
        }
    }

    /// Up to `limit` transactions after `token`, in one statement (one snapshot, so a concurrent prune is
    /// either wholly seen, and the token may have expired, or not at all). See `HistoryStore`.
    public func history(after token: HistoryToken?, limit: Int) throws -> [HistoryTransaction] {
        try HistoryReading.check(limit: limit)
        let statements = try historyStatements()
        return try withReadRunner(needsTransaction: false) { runner in
            // The store's identifier is needed for a `nil` token's start: one statement more the first time.
            let start: HistoryToken
            if let token {
                start = token
            } else {
                let (storeID, pruned) = try Self.state(try runner.run(statements.current))
                start = try HistoryReading.start(nil, storeID: storeID, pruned: pruned)
            }
            let result = try runner.run(statements.read(after: start, limit: limit))
            let (storeID, pruned) = try Self.state(result)
            let checked = try HistoryReading.start(start, storeID: storeID, pruned: pruned)
            var tokens = HistoryReading.Tokens(from: checked, current: try Self.snapshot(result, column: 2))
            return try (0..<result.rowCount).compactMap { row in try Self.transaction(result, row: row, &tokens) }
        }
    }

    /// Deletes the transactions `token` has read in full, in one transaction that locks the history state
    /// row; older tokens expire. A token older than the last pruning deletes nothing.
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try prune { runner, storeID in
            _ = try HistoryReading.start(token, storeID: storeID, pruned: nil)
            return HistoryReading.pruning(upTo: token)
        }
    }

    /// Deletes the transactions recorded before `date`, up to the first that was not or that had not
    /// ended, in one transaction; tokens that had not read them expire.
    public func deleteHistory(olderThan date: Date) throws -> Int {
        let statements = try historyStatements()
        return try prune { runner, _ in
            let result = try runner.run(statements.horizon(before: date))
            let current = try Self.snapshot(result, column: 0)
            let text = try result.decodeIfPresent(String.self, row: 0, column: 1)
            guard let first = text.map({ UInt64($0) }) ?? current.xmax else {
                throw PostgresStoreError(.unexpectedResult, "history horizon '\(text ?? "")' is not a transaction ID")
            }
            // Every transaction the truncated snapshot shows, whatever its number: the number recorded is the
            // highest deleted.
            return (current.truncated(below: first), .max)
        }
    }

    /// Prunes up to the snapshot `upTo` picks (in the prune's transaction, before the state row is locked,
    /// so that the transaction holds no ID of its own yet), unless it would not cover what was pruned before.
    private func prune(_ upTo: (StatementRunner, String) throws -> HistoryReading.Pruned) throws -> Int {
        try requireWritable()
        let statements = try historyStatements()
        return try withRetries {
            try withRunner { runner in
                try runner.transaction { runner in
                    let identity = try runner.run(statements.current)
                    let target = try upTo(runner, try Self.state(identity).storeID)
                    let (_, old) = try Self.state(try runner.run(statements.lockState))
                    if let old {
                        guard old.snapshot.isCovered(by: target.snapshot), old.number <= target.number else { return 0 }
                    }
                    let deleted = try runner.run(statements.prune(upTo: target.snapshot, number: target.number))
                    let highest = try deleted.decode(Int64.self, row: 0, column: 1)
                    let number = target.number == .max ? max(highest, old?.number ?? 0) : target.number
                    try runner.run(statements.recordPruned((target.snapshot, number)))
                    return Int(try deleted.decode(Int64.self, row: 0, column: 0))
                }
            }
        }
    }

    /// The statements, for a store that records history and commits (a sandbox's saves never show in history).
    private func historyStatements() throws -> HistoryStatements {
        try requireCommits(for: "reading or pruning history")
        guard configuration.recordsHistory else {
            throw CVManagedStructError.historyUnavailable(
                "this PostgresStore does not record history; open it with recordsHistory = true (and migrate "
                    + "with recordsHistory: true)")
        }
        return HistoryStatements(schema: configuration.schema)
    }

    /// The state row's identifier and pruning point (columns 0 and 1 of row 0).
    private static func state(_ result: QueryResult) throws -> (storeID: String, pruned: HistoryReading.Pruned?) {
        guard result.rowCount > 0 else {
            throw CVManagedStructError.historyUnavailable(
                "the history state table \(SchemaMapping.historyStateTable) has no row: migrate with recordsHistory")
        }
        let storeID = try result.decode(String.self, row: 0, column: 0)
        let pruned = try result.decodeIfPresent(String.self, row: 0, column: 1).map { text in
            let parts = text.split(separator: "#")
            guard parts.count == 2, let snapshot = HistorySnapshot(text: String(parts[0])), let number = Int64(parts[1])
            else { throw malformedSnapshot(text) }
            return (snapshot, number)
        }
        return (storeID, pruned)
    }

    private static func snapshot(_ result: QueryResult, column: Int) throws -> HistorySnapshot {
        let text = try result.decode(String.self, row: 0, column: column)
        guard let snapshot = HistorySnapshot(text: text) else { throw malformedSnapshot(text) }
        return snapshot
    }

    private static func malformedSnapshot(_ text: String) -> PostgresStoreError {
        PostgresStoreError(.unexpectedResult, "'\(text)' is not a snapshot")
    }

    /// The transaction of one row of ``HistoryStatements/read(after:limit:)``, or `nil` for the row of
    /// nulls that stands for "none".
    private static func transaction(_ result: QueryResult, row: Int, _ tokens: inout HistoryReading.Tokens)
        throws -> HistoryTransaction?
    {
        guard let number = try result.decodeIfPresent(Int64.self, row: row, column: 3) else { return nil }
        let entities = try result.decode([String].self, row: row, column: 8)
        let kinds = Array(try result.decode(String.self, row: row, column: 9))
        let keys = try HistoryRuns.keys(try result.decode([Int64].self, row: row, column: 10), total: kinds.count)
        let properties = try result.decode([String].self, row: row, column: 11).map { list in
            list.isEmpty ? [] : list.split(separator: ",").map(String.init)
        }
        let tombstones = try result.decodeIfPresent(String.self, row: row, column: 12).map(TombstoneCoding.decode)
        let versions = try HistoryRuns.values(
            try result.decode([Int64?].self, row: row, column: 14), total: kinds.count, what: "versions"
        ) { $0.map(Int.init) }
        let entityIndex = try HistoryRuns.values(
            try result.decode([Int32].self, row: row, column: 15), total: kinds.count, what: "entities"
        ) { Int($0) }
        let propertyIndex = try HistoryRuns.values(
            try result.decode([Int32].self, row: row, column: 16), total: kinds.count, what: "property lists"
        ) { Int($0) }
        guard keys.count == kinds.count, versions.count == kinds.count, entityIndex.count == kinds.count,
            propertyIndex.count == kinds.count,
            entityIndex.allSatisfy({ entities.indices.contains(Int($0)) }),
            propertyIndex.allSatisfy({ properties.indices.contains(Int($0)) })
        else {
            throw PostgresStoreError(
                .unexpectedResult, "history transaction \(number) has arrays that do not fit together")
        }
        var changes: [HistoryChange] = []
        changes.reserveCapacity(kinds.count)
        for position in kinds.indices {
            guard let kind = HistoryChange.Kind(letter: kinds[position]) else {
                throw PostgresStoreError(
                    .unexpectedResult, "history transaction \(number) has a change of kind \(kinds[position])")
            }
            changes.append(
                HistoryChange(
                    kind: kind, objectID: .permanent(entities[Int(entityIndex[position])], keys[position]),
                    updatedProperties: properties[Int(propertyIndex[position])],
                    tombstone: tombstones?[position] ?? [:], version: versions[position]))
        }
        let inBatch = try result.decode(Bool.self, row: row, column: 13)
        return HistoryTransaction(
            token: tokens.after(number, inBatch: inBatch),
            transactionNumber: number, timestamp: try result.decode(Date.self, row: row, column: 5),
            author: try result.decodeIfPresent(String.self, row: row, column: 6),
            name: try result.decodeIfPresent(String.self, row: row, column: 7), changes: changes)
    }
}
