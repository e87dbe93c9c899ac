import Foundation
import LibPQ

extension PostgresStore {
    /// How a write attempt tracks its commit: a fresh identifier per attempt, resolved by
    /// ``resolveCommit(_:)``; `nil` when the store leaves lost commits unresolved
    /// (``Configuration/resolvesCommitOutcomes``).
    func commitTracking(on session: any DatabaseSession) -> CommitTracking? {
        guard configuration.resolvesCommitOutcomes else { return nil }
        let marker = CommitMarker(
            table: commitTable, backend: session.backendIdentity, templates: carryTemplates)
        return CommitTracking(marker: marker) { [self] in try resolveCommit($0) }
    }

    /// Finds out whether the transaction of `marker`, whose `COMMIT` reply was lost, committed: on a new
    /// connection (to whichever host is primary now), as long as ``Configuration/failoverBudget`` lasts,
    /// with the outage backoff between tries. A lookup whose own connection fails is tried again.
    ///
    /// - Returns: The rows the statement that carried the `COMMIT` returned, read back; a result not to be
    ///   read when none carried it.
    /// - Throws: ``CommitNotMade`` when the transaction did not commit (the caller runs it again);
    ///   ``PostgresStoreError/Code/commitOutcomeUnknown`` when the budget ran out first, the table was
    ///   emptied by hand, or the lookup failed otherwise (the old backend could not be ended, say).
    func resolveCommit(_ marker: CommitMarker) throws -> QueryResult {
        let started = ContinuousClock.now
        var tries = 0
        while true {
            tries += 1
            let failure: any Error
            do {
                return try resolvingSessions.withSession { session in
                    try lookUpCommit(marker, on: runner(on: session, cancellation: nil))
                }
            } catch let verdict as CommitNotMade {
                throw verdict
            } catch let error as UnresolvedCommit {
                throw PostgresStoreError(.commitOutcomeUnknown, error.reason)
            } catch {
                failure = error
            }
            let spent = ContinuousClock.now - started
            let busy = failure is CommitStillRunning
            guard busy || Self.retryReason(failure) == .unavailable, spent < configuration.failoverBudget else {
                throw PostgresStoreError(
                    .commitOutcomeUnknown,
                    "the connection was lost while COMMIT was in flight, and whether the transaction committed could "
                        + "not be found out within the failover budget (\(tries) lookups): \(failure)",
                    underlying: failure)
            }
            let pause = Backoff.outage.pause(afterRetry: tries)
            Thread.sleep(forTimeInterval: min(pause, configuration.failoverBudget - spent).timeInterval)
        }
    }

    /// One lookup (``CommitMarker/lookup()``), in a READ COMMITTED transaction whatever the server's default
    /// (each statement must see what committed before it started), one round trip; a second for the rows a
    /// carrying statement returned.
    private func lookUpCommit(_ marker: CommitMarker, on runner: StatementRunner) throws -> QueryResult {
        try runner.transaction(isolation: .readCommitted) { runner in
            var results: [QueryResult] = []
            try runner.pipelined { emit in
                for statement in marker.lookup() { try emit(statement) { results.append($0) } }
            }
            guard results.count == 3, results.allSatisfy({ $0.rowCount == 1 }) else {
                throw PostgresStoreError(.unexpectedResult, "a commit lookup returned \(results.count) results")
            }
            // A backend of the old transaction that did not exit in time may still commit; nor may it hold
            // the lock yet (it may not have run the statement that takes it): look again either way.
            let ended = try results[0].decodeIfPresent(Bool.self, row: 0, column: 0)
            guard ended != false, try results[1].decode(Bool.self, row: 0, column: 0) else {
                throw CommitStillRunning()
            }
            let ours = try BindEncoding.int64(results[2], row: 0, column: 0)
            let sentinel = try BindEncoding.int64(results[2], row: 0, column: 1)
            if ours > 0 { return try marker.carriedRows().map { try runner.send($0) } ?? results[2] }
            guard sentinel > 0 else {
                throw UnresolvedCommit(
                    reason: "the connection was lost while COMMIT was in flight, and the commit table "
                        + "\(marker.table) has lost its sentinel row (it was emptied by hand): a missing identifier "
                        + "proves nothing, so the transaction may or may not have committed")
            }
            throw CommitNotMade(lost: LibPQError(.connectionLost, "the COMMIT reply was lost"))
        }
    }

    /// Deletes the identifiers of transactions that began more than an hour (or ten failover budgets) ago
    /// (never the sentinel), at most once per ``commitPruneInterval`` per store, on the connection that just
    /// committed a write. A failure (a role without `DELETE` on the table, say) is ignored, the table only
    /// growing: the statement's event (``StoreEvent/Kind/statement``) carries the error.
    func pruneCommitsIfDue(_ runner: StatementRunner) {
        guard configuration.resolvesCommitOutcomes else { return }
        let now = ContinuousClock.now
        let due = lastCommitPrune.withLock { last in
            guard now - last >= Self.commitPruneInterval else { return false }
            last = now
            return true
        }
        guard due else { return }
        let seconds = max(3600, 10 * configuration.failoverBudget.timeInterval)
        _ = try? runner.send(
            "DELETE FROM \(commitTable) WHERE at > '-infinity' "
                + "AND at < now() - make_interval(secs => \(typedBind: .scalar(.double, .double(seconds))))")
    }

    /// The commit table, in the store's schema.
    private var commitTable: SQLIdentifier { SQLIdentifier(SchemaMapping.commitTable, schema: configuration.schema) }

    /// How often a store deletes old commit identifiers.
    static let commitPruneInterval: Duration = .seconds(600)
}

/// The old transaction still holds its lock (its backend did not end in time): look again.
struct CommitStillRunning: Error {}

/// A lookup that cannot tell (the commit table was emptied by hand).
struct UnresolvedCommit: Error {
    var reason: String
}

/// Sessions for commit lookups: a new connection each time, closed afterwards. Never the store's pool,
/// whose every connection may be checked out (one of them the broken one whose reply was lost).
struct DirectSessions: SessionSource {
    let configuration: ConnectionConfiguration

    func withSession<T>(_ body: (any DatabaseSession) throws -> T) throws -> T {
        let connection = try Connection(configuration)
        defer { connection.close() }
        return try body(connection)
    }
}
