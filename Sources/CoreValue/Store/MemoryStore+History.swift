import Foundation

/// A ``MemoryStore``'s recorded history. Saves apply one at a time under the store's lock, so each ends
/// before the next begins: transaction numbers are commit order, and a snapshot is "everything below the
/// next number".
struct MemoryHistory {
    struct Entry {
        var number: UInt64
        var timestamp: Date
        var author: String?
        var name: String?
        var changes: [HistoryChange]
    }

    let storeID = "memory-" + UUID().uuidString
    let author: String?
    var entries: [Entry] = []
    /// The number the next transaction gets (numbers start where PostgreSQL's transaction IDs do).
    var next: UInt64 = 3
    /// What has been deleted: everything this snapshot shows, numbered up to the number.
    var pruned: HistoryReading.Pruned?

    init(author: String?) { self.author = author }

    var current: HistorySnapshot { HistorySnapshot(xmin: next, xmax: next) }
    /// The highest number recorded (numbers are transaction IDs here).
    var lastNumber: Int64 { Int64(next) - 1 }

    mutating func record(
        _ changes: ChangeSet, _ result: SaveResult, tombstones: [ManagedObjectID: [String: AttributeValue]]
    ) {
        let recorded = HistoryChange.changes(of: changes, result: result, tombstones: tombstones)
        guard !recorded.isEmpty else { return }
        entries.append(
            Entry(
                number: next, timestamp: Date(), author: changes.transactionAuthor ?? author,
                name: changes.transactionName, changes: recorded))
        next += 1
    }
}

extension MemoryStore: HistoryStore {
    /// Whether the store records history (`recordsHistory` when it was made).
    public var recordsHistory: Bool { locked { history != nil } }

    /// A token for now: history after it holds only later saves.
    public func currentHistoryToken() throws -> HistoryToken {
        try locked {
            let history = try recorded()
            return HistoryToken(storeID: history.storeID, base: history.current, number: history.lastNumber)
        }
    }

    /// Up to `limit` transactions after `token`, in commit order (see ``HistoryStore``).
    public func history(after token: HistoryToken?, limit: Int) throws -> [HistoryTransaction] {
        try HistoryReading.check(limit: limit)
        return try locked {
            let history = try recorded()
            let start = try HistoryReading.start(token, storeID: history.storeID, pruned: history.pruned)
            let current = history.current
            // Entries are in number order already: the rest of the start's batch, then the new batch.
            let rest = history.entries.lazy.filter { start.isRestOfBatch(xid: $0.number, number: Int64($0.number)) }
            let new = history.entries.lazy.filter { !start.batch.shows($0.number) && current.shows($0.number) }
            let page = rest.map { ($0, true) } + new.map { ($0, false) }
            var tokens = HistoryReading.Tokens(from: start, current: current)
            return page.prefix(limit).map { entry, inBatch in
                let number = Int64(entry.number)
                return HistoryTransaction(
                    token: tokens.after(number, inBatch: inBatch),
                    transactionNumber: number, timestamp: entry.timestamp, author: entry.author, name: entry.name,
                    changes: entry.changes)
            }
        }
    }

    /// Deletes the transactions `token` has read in full; older tokens expire.
    public func deleteHistory(before token: HistoryToken) throws -> Int {
        try locked {
            let history = try recorded()
            _ = try HistoryReading.start(token, storeID: history.storeID, pruned: nil)
            return prune(upTo: HistoryReading.pruning(upTo: token))
        }
    }

    /// Deletes the transactions saved before `date`, oldest first, up to the first that was not.
    public func deleteHistory(olderThan date: Date) throws -> Int {
        try locked {
            let history = try recorded()
            let first = history.entries.first { $0.timestamp >= date }?.number ?? history.next
            return prune(upTo: (history.current.truncated(below: first), Int64(first) - 1))
        }
    }

    /// Deletes what `pruned` covers, when it covers what was deleted before (an older one deletes nothing).
    /// Under the lock.
    private func prune(upTo pruned: HistoryReading.Pruned) -> Int {
        guard var history else { return 0 }
        if let old = history.pruned {
            guard old.snapshot.isCovered(by: pruned.snapshot), old.number <= pruned.number else { return 0 }
        }
        let before = history.entries.count
        history.entries.removeAll { pruned.snapshot.shows($0.number) && Int64($0.number) <= pruned.number }
        history.pruned = pruned
        self.history = history
        return before - history.entries.count
    }

    /// The history, or the error for a store that does not record it. Under the lock.
    private func recorded() throws -> MemoryHistory {
        guard let history else {
            throw CVManagedStructError.historyUnavailable(
                "this MemoryStore does not record history; create it with recordsHistory: true")
        }
        return history
    }

    /// The tombstones of a change set's deletes, read before they apply. Under the lock.
    func tombstones(of resolved: ResolvedChangeSet) -> [ManagedObjectID: [String: AttributeValue]] {
        var result: [ManagedObjectID: [String: AttributeValue]] = [:]
        for (deletion, entity) in zip(resolved.changes.deletes, resolved.deleteEntities) {
            let names = HistoryChange.tombstoneAttributes(of: entity.entity)
            guard !names.isEmpty, let key = deletion.id.primaryKey, let row = state.row(entity.name, key) else {
                continue
            }
            result[deletion.id] = Dictionary(uniqueKeysWithValues: names.map { ($0, row.attributes[$0] ?? .null) })
        }
        return result
    }
}
