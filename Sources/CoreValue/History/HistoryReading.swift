/// The rules every store reads its history by, so that both answer alike: which transactions come after a
/// token, in which order, and which token stands after each.
///
/// A read takes the current snapshot. The transactions after a token are those of its batch not yet read
/// (shown by `batch`, not by `base`, numbered above `after`), in number order, then those the current snapshot
/// shows and the batch doesn't (a new batch), in number order. Snapshots are consistent cuts of commit order,
/// so every batch holds all transactions that committed before any of its own; within a batch, a transaction
/// that waited for another's rows took its number after that one committed.
@_spi(StoreImplementation) public enum HistoryReading {
    /// Where a read from `token` starts: the token itself, or for `nil` the origin of `storeID`'s history.
    public static func start(_ token: HistoryToken?, storeID: String, pruned: HistorySnapshot?) throws -> HistoryToken {
        guard let token else { return HistoryToken(storeID: storeID, base: pruned ?? .origin) }
        guard token.storeID == storeID else {
            throw CVManagedStructError.historyUnavailable(
                "the token belongs to another store's history (\(token.storeID)), not this one's (\(storeID)): "
                    + "tokens work only with the database and schema they came from")
        }
        if let pruned, !pruned.isCovered(by: token.base) {
            throw CVManagedStructError.historyExpired(token.description)
        }
        return token
    }

    /// The token after a transaction numbered `number` that a read from `start` returned, `inBatch` when it
    /// belonged to the start's batch, else to the new batch up to `current`.
    public static func token(after number: Int64, inBatch: Bool, from start: HistoryToken, current: HistorySnapshot)
        -> HistoryToken
    {
        inBatch
            ? HistoryToken(storeID: start.storeID, base: start.base, batch: start.batch, after: number)
            : HistoryToken(storeID: start.storeID, base: start.batch, batch: current, after: number)
    }

    /// Throws for a `limit` below 1.
    public static func check(limit: Int) throws {
        guard limit >= 1 else {
            throw CVManagedStructError.invalidObject(message: "a history read's limit must be at least 1, not \(limit)")
        }
    }
}
