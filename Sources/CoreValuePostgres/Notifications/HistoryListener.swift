@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

/// A change listener in history mode: it hands out every transaction committed after a token, in commit
/// order, each once, from a store that records history (``PostgresStore/Configuration/recordsHistory``).
///
/// It reads the store's history (``PostgresStore/history(after:limit:)``) and uses the store's
/// `NOTIFY` only to wake up early; without a ``PostgresStore/Configuration/notificationChannel`` it polls.
/// Nothing it hands out depends on a notification arriving: after a lost connection, a restart, a failover
/// or a busy spell it reads on from its last token, so there is no "may have missed changes" event. Keep
/// ``token`` (it is `Codable`) to resume in another process or after a restart.
///
/// ```swift
/// let listener = try store.makeHistoryListener(after: savedToken)
/// for try await transaction in listener.transactions() {
///     for change in transaction.changes { cache.invalidate(change.objectID) }
///     try save(transaction.token)
/// }
/// ```
///
/// One thread uses a listener at a time (as a ``ChangeListener``).
public final class HistoryListener {
    fileprivate let store: PostgresStore
    /// The token after the last transaction handed out (`nil`: none yet, reading from the oldest kept).
    public private(set) var token: HistoryToken?
    /// How often the history is read when no notification wakes the listener.
    public let pollInterval: Duration
    /// How many transactions one read asks for.
    public let batchSize: Int
    private var wakeUps: ChangeListener?
    private var closed = false

    /// A listener that hands out what commits after `token`.
    ///
    /// - Throws: `CVManagedStructError.historyUnavailable` for a store that does not record history;
    ///   `CVManagedStructError.invalidObject` for a `batchSize` below 1; ``PostgresStoreError/Code/sandboxed``
    ///   in a test's transaction sandbox.
    init(store: PostgresStore, after token: HistoryToken?, pollInterval: Duration, batchSize: Int) throws {
        try store.requireCommits(for: "a HistoryListener")
        guard store.recordsHistory else {
            throw CVManagedStructError.historyUnavailable(
                "a history listener needs a store that records history (recordsHistory = true)")
        }
        try HistoryReading.check(limit: batchSize)
        self.store = store
        self.token = token
        self.pollInterval = pollInterval
        self.batchSize = batchSize
    }

    deinit { wakeUps?.close() }

    /// The transactions committed after ``token``, at most ``batchSize``, waiting up to `timeout` for the
    /// first; empty when none committed in time. ``token`` moves past what is returned.
    ///
    /// - Throws: `CVManagedStructError.historyExpired` when history after ``token`` was deleted (reload, then
    ///   start a new listener from `currentHistoryToken()`); `LibPQError(.connectionClosed)` after
    ///   ``close()``; the store's errors once its `failoverBudget` is spent (``token`` stays where it was:
    ///   call again to go on).
    public func next(timeout: Duration) throws -> [HistoryTransaction] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            guard !closed else { throw LibPQError(.connectionClosed, "the history listener was closed") }
            let transactions = try store.history(after: token, limit: batchSize)
            if let last = transactions.last {
                token = last.token
                return transactions
            }
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return [] }
            waitForWakeUp(min(remaining, pollInterval))
        }
    }

    /// Waits up to `timeout` for a notification (any: a change, or a reconnect), or sleeps it away without a
    /// channel or while the notification connection is down.
    private func waitForWakeUp(_ timeout: Duration) {
        if wakeUps == nil, store.notificationChannel != nil { wakeUps = try? store.makeChangeListener() }
        guard let wakeUps, (try? wakeUps.events(timeout: timeout)) != nil else {
            Thread.sleep(forTimeInterval: timeout.timeInterval)
            return
        }
    }

    /// The transactions as they commit, for `for try await`: each read runs on a thread of the store (as the
    /// store's async calls do) and waits at most a quarter second, so the sequence ends soon after its task
    /// is cancelled. The consumer sets the pace: nothing is read ahead of it beyond one batch. The sequence
    /// throws what ``next(timeout:)`` throws.
    public func transactions() -> HistoryTransactions {
        HistoryTransactions(listener: Handover(listener: self))
    }

    /// Stops listening; later calls throw.
    public func close() {
        closed = true
        wakeUps?.close()
        wakeUps = nil
    }
}

/// A listener handed to the store's threads by ``HistoryTransactions``: one read at a time, each awaited
/// before the next starts.
private struct Handover: @unchecked Sendable {
    // @unchecked: the listener is used by one read at a time, each awaited before the next starts.
    let listener: HistoryListener
}

/// ``HistoryListener/transactions()``: an async sequence of a history listener's transactions.
public struct HistoryTransactions: AsyncSequence, Sendable {
    /// A committed transaction.
    public typealias Element = HistoryTransaction
    fileprivate let listener: Handover

    /// Reads the listener's transactions one batch at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let listener: Handover
        private var batch: [HistoryTransaction] = []
        private var position = 0

        fileprivate init(listener: Handover) { self.listener = listener }

        /// The next transaction, waiting for one to commit; `nil` once the task is cancelled.
        public mutating func next() async throws -> HistoryTransaction? {
            while position == batch.count {
                if Task.isCancelled { return nil }
                let listener = self.listener
                batch = try await withCheckedThrowingContinuation { continuation in
                    listener.listener.store.runBlocking {
                        continuation.resume(with: Result { try listener.listener.next(timeout: .milliseconds(250)) })
                    }
                }
                position = 0
            }
            defer { position += 1 }
            return batch[position]
        }
    }

    /// An iterator; one task uses it (the listener is used by one thread at a time).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(listener: listener) }
}

extension PostgresStore {
    /// A listener in history mode: every transaction committed after `token` (`nil`: from the oldest kept),
    /// once each, in commit order, woken by the store's notifications when it has a channel and reading
    /// every `pollInterval` otherwise.
    ///
    /// - Throws: `CVManagedStructError.historyUnavailable` when the store does not record history;
    ///   ``PostgresStoreError/Code/sandboxed`` in a test's transaction sandbox.
    public func makeHistoryListener(
        after token: HistoryToken?, pollInterval: Duration = .seconds(1), batchSize: Int = 500
    ) throws -> HistoryListener {
        try HistoryListener(store: self, after: token, pollInterval: pollInterval, batchSize: batchSize)
    }
}
