/// The rules every store reads its history by, so that both answer alike: which transactions come after a
/// token, in which order, and which token stands after each.
///
/// A read takes the current snapshot. The transactions after a token are those of its batch not yet read
/// (shown by `batch`, not by `base`, numbered above `after`), in number order, then those the current snapshot
/// shows and the batch doesn't (a new batch), in number order. Snapshots are consistent cuts of commit order,
/// so every batch holds all transactions that committed before any of its own; within a batch, a transaction
/// that waited for another's rows took its number after that one committed.
@_spi(StoreImplementation) public enum HistoryReading {
    /// What a store has pruned: every transaction `snapshot` shows, numbered up to `number`.
    public typealias Pruned = (snapshot: HistorySnapshot, number: Int64)

    /// Where a read from `token` starts: the token itself, or for `nil` the origin of `storeID`'s history
    /// (what was pruned).
    ///
    /// - Throws: `historyUnavailable` for another history's token; `historyExpired` when the token has not
    ///   read everything that was pruned.
    public static func start(_ token: HistoryToken?, storeID: String, pruned: Pruned?) throws -> HistoryToken {
        guard let token else {
            return HistoryToken(storeID: storeID, base: pruned?.snapshot ?? .origin, number: pruned?.number ?? 0)
        }
        guard token.storeID == storeID else {
            throw CVManagedStructError.historyUnavailable(
                "the token belongs to another store's history (\(token.storeID)), not this one's (\(storeID)): "
                    + "tokens work only with the database and schema they came from")
        }
        if let pruned, !covers(token, pruned) { throw CVManagedStructError.historyExpired(token.description) }
        return token
    }

    /// Whether `token` has read everything `pruned` deleted: with its base, or part way through its batch.
    public static func covers(_ token: HistoryToken, _ pruned: Pruned) -> Bool {
        (pruned.snapshot.isCovered(by: token.base) && pruned.number <= token.baseNumber)
            || (pruned.snapshot.isCovered(by: token.batch) && pruned.number <= token.after)
    }

    /// What `deleteHistory(before: token)` deletes: what the token read of its batch (numbered up to
    /// `after`; with the base's transactions numbered that far, which is all of them but a late committer's),
    /// or its base when it stands at a batch's start.
    public static func pruning(upTo token: HistoryToken) -> Pruned {
        token.batch == token.base ? (token.base, token.baseNumber) : (token.batch, token.after)
    }

    /// The tokens of one read's transactions, in order: each transaction of the start's batch moves ``after``
    /// on; the first of the new batch (up to `current`) makes the start's batch the base, numbered up to the
    /// highest number read in it.
    public struct Tokens {
        let start: HistoryToken
        let current: HistorySnapshot
        /// The highest number read with the start's base and batch so far.
        var top: Int64

        /// Tokens for a read from `start` that took the snapshot `current`.
        public init(from start: HistoryToken, current: HistorySnapshot) {
            self.start = start
            self.current = current
            self.top = max(start.baseNumber, start.after)
        }

        /// The token after the transaction numbered `number`, `inBatch` when it was of the start's batch.
        public mutating func after(_ number: Int64, inBatch: Bool) -> HistoryToken {
            guard inBatch else {
                return HistoryToken(
                    storeID: start.storeID, base: start.batch, baseNumber: top, batch: current, after: number)
            }
            top = max(top, number)
            return HistoryToken(
                storeID: start.storeID, base: start.base, baseNumber: start.baseNumber, batch: start.batch,
                after: number)
        }
    }

    /// Throws for a `limit` below 1.
    public static func check(limit: Int) throws {
        guard limit >= 1 else {
            throw CVManagedStructError.invalidObject(message: "a history read's limit must be at least 1, not \(limit)")
        }
    }
}
