import Foundation

/// A store that can record every committed save and hand it out again in commit order: Core Data's
/// persistent history, for several processes sharing one database. ``MemoryStore`` and `PostgresStore`
/// record it when opened with history on (off by default).
///
/// ```swift
/// var token = try loadToken()                      // nil the first time: from the oldest kept
/// for transaction in try store.history(after: token, limit: 500) {
///     for change in transaction.changes { cache.invalidate(change.objectID) }
///     token = transaction.token
/// }
/// try saveToken(token)
/// ```
///
/// A reader sees each committed transaction exactly once, in an order where a transaction that waited for
/// another's rows comes after it, and never one that rolled back. Saves made by other tools (`psql`, another
/// library) are not recorded.
public protocol HistoryStore: Store {
    /// Whether this store records its saves' history.
    var recordsHistory: Bool { get }

    /// A token for "now": history read after it holds only what commits from here on.
    ///
    /// - Throws: ``CVManagedStructError/Code/historyUnavailable`` when the store does not record history;
    ///   the store's errors.
    func currentHistoryToken() throws -> HistoryToken

    /// Up to `limit` transactions that committed after `token` (`nil`: from the oldest kept), in commit
    /// order, each with the token that stands after it. Fewer than `limit` (none at all) means nothing more
    /// has committed yet; read again from the last token for more.
    ///
    /// - Throws: ``CVManagedStructError/Code/historyExpired`` when part of the history after `token` was
    ///   deleted; ``CVManagedStructError/Code/historyUnavailable`` for a token of another store's history, or
    ///   a store that does not record history; ``CVManagedStructError/Code/invalidObject`` for a `limit`
    ///   below 1; the store's errors (then read again from the same token: nothing is lost).
    func history(after token: HistoryToken?, limit: Int) throws -> [HistoryTransaction]

    /// Deletes the history every reader has read: the transactions up to `token` (those it has read in
    /// full). A reader whose token is older gets ``CVManagedStructError/Code/historyExpired`` from then on.
    /// Returns how many transactions were deleted.
    @discardableResult func deleteHistory(before token: HistoryToken) throws -> Int

    /// Deletes the transactions recorded before `date`, oldest first, stopping at the first that is not
    /// (or that is still being written): what a reader has not read by then expires. Returns how many were
    /// deleted.
    @discardableResult func deleteHistory(olderThan date: Date) throws -> Int
}

extension HistoryStore {
    /// ``currentHistoryToken()``, run where blocking is harmless.
    public nonisolated(nonsending) func currentHistoryToken() async throws -> HistoryToken {
        try await ManagedObjectContext.performBlocking(on: refinements) { try self.currentHistoryToken() }
    }

    /// ``history(after:limit:)``, run where blocking is harmless.
    public nonisolated(nonsending) func history(after token: HistoryToken?, limit: Int) async throws
        -> [HistoryTransaction]
    {
        try await ManagedObjectContext.performBlocking(on: refinements) { try self.history(after: token, limit: limit) }
    }

    /// ``deleteHistory(before:)``, run where blocking is harmless.
    @discardableResult
    public nonisolated(nonsending) func deleteHistory(before token: HistoryToken) async throws -> Int {
        try await ManagedObjectContext.performBlocking(on: refinements) { try self.deleteHistory(before: token) }
    }

    /// ``deleteHistory(olderThan:)``, run where blocking is harmless.
    @discardableResult
    public nonisolated(nonsending) func deleteHistory(olderThan date: Date) async throws -> Int {
        try await ManagedObjectContext.performBlocking(on: refinements) { try self.deleteHistory(olderThan: date) }
    }
}
