import Foundation
import LibPQ

extension PostgresStore {
    /// Why a failed attempt may be run again.
    enum RetryReason {
        /// A serialization failure (40001) or deadlock (40P01): counted against ``Configuration/maxAttempts``.
        case conflict
        /// The server could not be reached, or the connection broke before `COMMIT` was sent (a restart, a
        /// failover, a promote): retried until ``Configuration/failoverBudget`` is spent.
        case unavailable
        /// A streamed save that sent its upserts as plain inserts found an identifier taken
        /// (``StreamedInsertCollision``): run again at once with upserts, not counted against
        /// ``Configuration/maxAttempts``.
        case collision
    }

    /// A streamed save's plain insert (``apply(upserts:streaming:)``) that met a row another writer had
    /// stored meanwhile: the transaction rolled back, and run again with upserts it gives the same result.
    struct StreamedInsertCollision: Error {
        /// The unique violation.
        var error: DatabaseError
    }

    /// Runs `body`, repeating it after a serialization failure (40001), a deadlock (40P01) or a stale prepared
    /// statement (`DatabaseError.isStalePreparedStatement`), at most
    /// ``Configuration/maxAttempts`` times in all, and after a server that cannot be reached or a connection
    /// lost before `COMMIT` was sent, for as long as ``Configuration/failoverBudget`` lasts; with bounded
    /// exponential backoff and jitter.
    ///
    /// `body` is one whole transaction (or one statement outside a transaction), which the server rolled back
    /// (or never saw) in each of these cases, so repeating it is safe. A commit whose outcome is unknown
    /// (`LibPQError(.commitOutcomeUnknown)`) is never repeated, nor is anything once `mayRetry` says no (a
    /// stream that handed out a batch). When the budget runs out, the last connection error is thrown as
    /// ``PostgresStoreError/Code/serverUnavailable``, which says that nothing was committed. The server's and
    /// the driver's errors leave wrapped (``PostgresStoreError/wrapping(_:)``): this is where every call a
    /// context makes ends.
    func withRetries<T>(mayRetry: () -> Bool = { true }, _ body: () throws -> T) throws -> T {
        var conflicts = 0
        var outage: (started: ContinuousClock.Instant, attempts: Int)?
        while true {
            let error: any Error
            do {
                return try body()
            } catch let caught {
                error = caught
            }
            guard let reason = Self.retryReason(error), mayRetry() else { throw PostgresStoreError.wrapping(error) }
            let pause: Duration
            switch reason {
            case .conflict:
                conflicts += 1
                guard conflicts < maxAttempts else { throw PostgresStoreError.wrapping(error) }
                pause = Backoff.conflict.pause(afterRetry: conflicts)
            case .unavailable:
                let started = outage?.started ?? .now
                let attempts = (outage?.attempts ?? 0) + 1
                outage = (started, attempts)
                let budget = configuration.failoverBudget
                let spent = ContinuousClock.now - started
                // The first connection error is retried at once, even with no budget: a pooled connection
                // the server closed (restart, terminated backend) is replaced by the next checkout.
                guard attempts == 1 || spent < budget else {
                    throw PostgresStoreError.unavailable(after: spent, attempts: attempts, error)
                }
                // None for a stale pooled connection, then the outage schedule, within the budget.
                let step = attempts == 1 ? .zero : Backoff.outage.pause(afterRetry: attempts - 1)
                pause = max(.zero, min(step, budget - spent))
            case .collision:
                // Run again at once, with upserts: nothing to wait for, and it happens once per save.
                pause = .zero
            }
            counter.record { $0.retries += 1 }
            events.send(
                StoreEvent(
                    kind: .retry, duration: pause, attempt: conflicts + (outage?.attempts ?? 0),
                    error: error.underlyingCollision ?? error))
            if pause > .zero { Thread.sleep(forTimeInterval: pause.timeInterval) }
        }
    }

    /// Whether an error means the transaction was rolled back and may simply be run again.
    static func isRetryable(_ error: any Error) -> Bool { retryReason(error) != nil }

    /// Why an error may be retried, or `nil` when it may not.
    static func retryReason(_ error: any Error) -> RetryReason? {
        if error is StreamedInsertCollision { return .collision }
        // A lost COMMIT reply whose transaction, looked up, did not commit: as if it never reached the server.
        if error is CommitNotMade { return .unavailable }
        if let error = error as? DatabaseError {
            if error.sqlState.isRetryableTransactionError { return .conflict }
            // A cached statement made stale by a schema change (or a session that forgot it): the driver
            // dropped it, the transaction did nothing, and run again it is prepared afresh.
            if error.isStalePreparedStatement { return .conflict }
            // 57P01/57P02/57P03 and class 08 as the FATAL that ends a session: the server is shutting down,
            // crashed or is not ready yet, and the transaction did not commit. A class-08 ERROR on a live
            // session (08P01 for a malformed message, say) is a problem with what was sent: never repeated.
            let fatal = (error.nonLocalizedSeverity ?? error.severity) != "ERROR"
            return error.sqlState.isConnectionError && fatal ? .unavailable : nil
        }
        guard let error = error as? LibPQError else { return nil }
        if error.code == .connectionLost { return .unavailable }
        if error.code == .connectionFailed { return isLoginRefused(error.refusalText) ? nil : .unavailable }
        return nil
    }

    /// Whether a failed connection attempt was a server refusing this login rather than no server being
    /// there: a wrong password, an unknown role or database, no `pg_hba.conf` entry, a TLS or host-name
    /// problem. Waiting does not mend those, so they are thrown at once. libpq reports them only as text (the
    /// server's message, in its `lc_messages`); a refusal in another language is retried within the budget
    /// and then thrown with its message.
    static func isLoginRefused(_ message: String) -> Bool {
        // The refusals a `LoginRefusal` names, and the others a retry cannot mend either.
        guard LoginRefusal(message: message) == nil else { return true }
        let permanent = [
            "password", "does not exist", "SSL", "certificate", "could not translate host name",
            "invalid connection option", "permission denied",
        ]
        return permanent.contains { message.localizedCaseInsensitiveContains($0) }
    }
}

extension Error {
    /// The unique violation behind a ``PostgresStore/StreamedInsertCollision``, as the retry event reports it.
    fileprivate var underlyingCollision: (any Error)? { (self as? PostgresStore.StreamedInsertCollision)?.error }
}

extension PostgresStoreError {
    /// The error for work given up after the failover budget: nothing was committed.
    static func unavailable(after spent: Duration, attempts: Int, _ error: any Error) -> PostgresStoreError {
        PostgresStoreError(
            .serverUnavailable,
            "no usable server for \(String(format: "%.1f", spent.timeInterval)) s (\(attempts) attempts); nothing was "
                + "committed, so the work can be retried: \(error)", underlying: error)
    }
}
