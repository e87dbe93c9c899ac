@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
@testable import CoreValuePostgres
import Foundation
import LibPQ
import Synchronization
import Testing

/// The lookup after a lost `COMMIT` reply, against scripted sessions: its own connection failing (tried
/// again), the old transaction's lock still held (looked again), found (returned), not found (run again),
/// and a budget spent (unknown). `CommitResolutionTests` does the same against a server through a proxy.
@Suite struct CommitLookupScriptTests {
    /// What a lookup answers, per try.
    enum Answer: Sendable {
        case connectionLost, lockStillHeld, found, notFound
    }

    /// A counter shared with a script.
    final class Counter: Sendable {
        private let value = Mutex(0)
        var count: Int { value.withLock { $0 } }
        /// Adds one; returns the count before.
        func next() -> Int {
            value.withLock { count in
                defer { count += 1 }
                return count
            }
        }
    }

    /// Scripted sessions for a one-product insert whose first `COMMIT` loses its reply, and whose lookups
    /// answer `answers` in turn (the last one again when they run out).
    static func sessions(_ answers: [Answer]) -> ScriptedSessions {
        let commits = Counter()
        let lookups = Counter()
        return ScriptedSessions { call in
            if case .commit = call {
                if commits.next() == 0 { throw LibPQError(.commitOutcomeUnknown, "the reply to COMMIT was lost") }
                return try .command("COMMIT")
            }
            let sql = call.sql ?? ""
            if sql.contains("pg_terminate_backend") {
                let index = lookups.next()
                if answers[min(index, answers.count - 1)] == .connectionLost {
                    throw LibPQError(.connectionLost, "the lookup's connection was lost")
                }
                return try .scripted([("bool_and", .bool)], [[.null(.bool)]])
            }
            let answer = answers[min(max(lookups.count - 1, 0), answers.count - 1)]
            if sql.contains("pg_try_advisory_xact_lock") {
                return try .scripted([("locked", .bool)], [[try PostgresValue(answer != .lockStillHeld)]])
            }
            if sql.contains("count(*) FILTER") {
                let ours: Int64 = answer == .found ? 1 : 0
                return try .scripted(
                    [("ours", .int8), ("sentinel", .int8)], [[try PostgresValue(ours), try PostgresValue(Int64(1))]])
            }
            if sql.hasPrefix("INSERT INTO \"_corevalue_commits\"") { return try .command("INSERT 0 1") }
            return try .inserted(1)
        }
    }

    /// The product inserts the sessions were asked (one per attempt of the save).
    static func productInserts(_ sessions: ScriptedSessions) -> Int {
        sessions.statements.filter { $0.contains("\"Product\"") && $0.hasPrefix("INSERT") }.count
    }

    static func save(_ sessions: ScriptedSessions, budget: Duration = .seconds(5)) throws -> (
        PostgresStore, ManagedObjectContext, ManagedObject
    ) {
        let store = try ScriptedFailureTests.store(sessions) {
            $0.resolvesCommitOutcomes = true
            $0.failoverBudget = budget
        }
        let (context, product) = try ScriptedFailureTests.contextWithNewProduct(store)
        try context.save()
        return (store, context, product)
    }

    @Test func aLookupWhoseConnectionFailsIsTriedAgainAndAFoundCommitReturns() throws {
        let sessions = Self.sessions([.connectionLost, .lockStillHeld, .found])
        let (store, context, product) = try Self.save(sessions)
        #expect(!context.hasChanges && !product.objectID.isTemporary)
        // Committed once, never run again.
        #expect(Self.productInserts(sessions) == 1)
        #expect(store.statistics.retries == 0)
        #expect(sessions.log.filter { $0.contains("pg_terminate_backend") }.count == 3)
    }

    @Test func aCommitNotFoundIsRunAgainOnce() throws {
        let sessions = Self.sessions([.notFound])
        let (store, context, product) = try Self.save(sessions)
        #expect(!context.hasChanges && !product.objectID.isTemporary)
        #expect(Self.productInserts(sessions) == 2)
        #expect(store.statistics.retries == 1)
        // Each attempt wrote an identifier of its own.
        let markers = sessions.log.filter { $0.hasPrefix("INSERT INTO \"_corevalue_commits\"") }
        #expect(markers.count == 2)
    }

    @Test func aLookupThatCannotFinishWithinTheBudgetIsUnknown() throws {
        let sessions = Self.sessions([.lockStillHeld])
        #expect {
            _ = try Self.save(sessions, budget: .milliseconds(300))
        } throws: { error in
            (error as? PostgresStoreError)?.code == .commitOutcomeUnknown
        }
        #expect(Self.productInserts(sessions) == 1)
    }
}
