@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

/// What a store and a listener do by themselves when the server goes away: retry within the failover budget,
/// retire old connections, and listen again after a lost connection, saying that changes may have been missed.
/// The same behaviour across a real failover, a standby restart and pgbouncer is in `make test-ha`.
@Suite struct FailureRecoveryTests {
    /// A URL on loopback where nothing listens: a port this process bound and closed again.
    private static func refusingURL() throws -> String {
        let bound = try #require(LoopbackSocket.bind())
        defer { Foundation.close(bound.socket) }
        return "postgresql://corevalue@127.0.0.1:\(bound.port)/corevalue?connect_timeout=2"
    }

    private static func unreachableStore(budget: Duration) throws -> PostgresStore {
        var configuration = try PostgresStore.Configuration(url: try refusingURL())
        configuration.verifySchema = false
        configuration.failoverBudget = budget
        return try PostgresStore(model: ExampleModel.model, configuration: configuration)
    }

    @Test func workIsRetriedWithinTheFailoverBudgetAndThenSaysNothingWasCommitted() throws {
        let store = try Self.unreachableStore(budget: .milliseconds(400))
        defer { store.close() }
        var car = Car.sample("never")
        #expect {
            try car.save(ManagedObjectContext(store: store))
        } throws: { error in
            guard let error = error as? PostgresStoreError, error.code == .serverUnavailable else { return false }
            return error.message.contains("nothing was committed") && error.message.contains("could not connect")
        }
        // Backoff from 50 ms within 400 ms: an immediate retry, then at least three more.
        #expect(store.statistics.retries >= 4)
        #expect(car.objectID == nil)
    }

    @Test func aZeroBudgetRetriesOnceAtOnce() throws {
        let store = try Self.unreachableStore(budget: .zero)
        defer { store.close() }
        #expect {
            try store.fetch(FetchRequest(entityName: "Car"))
        } throws: { error in
            (error as? PostgresStoreError)?.code == .serverUnavailable
        }
        #expect(store.statistics.retries == 1)
    }

    @Test func connectionsOlderThanTheirLifetimeAreReplaced() throws {
        let events = EventLog()
        try TestDatabase.withExampleStore(poolSize: 1) { configuration in
            configuration.maxConnectionLifetime = .nanoseconds(1)
            configuration.onEvent = { events.append($0) }
        } _: { store, _, _ in
            let opened = events.all.filter { $0.kind == .connectionOpened }.count
            for _ in 0..<3 { _ = try store.fetch(FetchRequest(entityName: "Car")) }
            // Every connection has expired by the time it comes back, so it is closed, never reused: three
            // calls, three new connections.
            #expect(events.all.filter { $0.kind == .connectionOpened }.count == opened + 3)
        }
        let kept = EventLog()
        try TestDatabase.withExampleStore(poolSize: 1) { configuration in
            configuration.onEvent = { kept.append($0) }
        } _: { store, _, _ in
            let opened = kept.all.filter { $0.kind == .connectionOpened }.count
            for _ in 0..<3 { _ = try store.fetch(FetchRequest(entityName: "Car")) }
            #expect(kept.all.filter { $0.kind == .connectionOpened }.count == opened)
        }
    }

    @Test func anIdleConnectionThatExpiresIsReplacedAtCheckout() throws {
        let events = EventLog()
        try TestDatabase.withExampleStore(poolSize: 2) { configuration in
            configuration.maxConnectionLifetime = .milliseconds(300)
            configuration.onEvent = { events.append($0) }
        } _: { store, _, _ in
            // Two connections at once (a fetch while one is held), both returned young and kept idle.
            try store.pool.withConnection { _ in _ = try store.fetch(FetchRequest(entityName: "Car")) }
            let opened = events.all.filter { $0.kind == .connectionOpened }.count
            let discarded = events.all.filter { $0.kind == .connectionDiscarded }.count
            // The lifetime passing is what this test is about: nothing else to wait for.
            Thread.sleep(forTimeInterval: 0.35)
            _ = try store.fetch(FetchRequest(entityName: "Car"))
            let after = events.all
            let newlyDiscarded = after.filter { $0.kind == .connectionDiscarded }.count - discarded
            let newlyOpened = after.filter { $0.kind == .connectionOpened }.count - opened
            // The checkout retires both idle connections (not only the one it would hand out) and opens one.
            #expect(newlyDiscarded == 2, "opened \(opened), discarded \(discarded): \(after.map(\.kind))")
            #expect(newlyOpened == 1)
        }
    }

    @Test func aServerThatRefusesTheLoginIsAnErrorAtOnce() throws {
        try TestDatabase.withExampleStore { _, url, _ in
            var configuration = try PostgresStore.Configuration(
                url: url + (url.contains("?") ? "&" : "?")
                    + "dbname=cv_no_such_database")
            configuration.verifySchema = false
            let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { store.close() }
            #expect {
                try store.fetch(FetchRequest(entityName: "Car"))
            } throws: { error in
                ((error as? PostgresStoreError)?.underlying as? LibPQError)?.code == .connectionFailed
                    && "\(error)".contains("does not exist")
            }
            #expect(store.statistics.retries == 0)
        }
    }

    @Test func badRecoverySettingsAreRefused() throws {
        var configuration = try PostgresStore.Configuration(url: "postgresql://127.0.0.1/none")
        configuration.failoverBudget = .seconds(-1)
        #expect {
            try PostgresStore(model: ExampleModel.model, configuration: configuration)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .invalidConfiguration
        }
        configuration.failoverBudget = .seconds(1)
        configuration.maxConnectionLifetime = .zero
        #expect {
            try PostgresStore(model: ExampleModel.model, configuration: configuration)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .invalidConfiguration
        }
    }

    /// A store with a channel, its listener, and a way to end the listener's session from the server side.
    private func withListener(
        _ function: String = #function,
        _ body: (PostgresStore, ChangeListener, _ kill: () throws -> Void) throws -> Void
    ) throws {
        try TestDatabase.withExampleStore(function) { _, url, schema in
            let channel = "cv_" + schema
            var configuration = try PostgresStore.Configuration(url: url, schema: schema)
            configuration.notificationChannel = channel
            configuration.poolSize = 1
            let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { store.close() }
            let listener = try store.makeChangeListener()
            defer { listener.close() }
            let kill = {
                let admin = try Connection(url)
                defer { admin.close() }
                let result = try admin.query(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = $1",
                    [try PostgresValue("LISTEN " + Connection.quoteIdentifier(channel))])
                try #require(try result.decode(Int64.self, row: 0, column: 0) == 1)
            }
            try body(store, listener, kill)
        }
    }

    /// The events of the next call that returns any (bounded).
    private func nextEvents(_ listener: ChangeListener) throws -> [ChangeListener.Event] {
        for _ in 0..<50 {
            let events = try listener.events(timeout: .milliseconds(200))
            if !events.isEmpty { return events }
        }
        return []
    }

    @Test func aListenerWhoseSessionEndsListensAgainAndReportsTheGap() throws {
        try withListener { store, listener, kill in
            var first = Car.sample("before")
            try first.save(ManagedObjectContext(store: store))
            #expect(try nextEvents(listener).count == 1)

            try kill()
            let gap = try nextEvents(listener)
            guard case .mayHaveMissedChanges(let details)? = gap.first, gap.count == 1 else {
                Issue.record("expected one gap, got \(gap)")
                return
            }
            #expect(details.attempts >= 1)
            #expect(details.resumedAt >= details.lostAt)
            #expect(listener.isUsable)

            // Listening again: the next save is heard.
            var second = Car.sample("after")
            try second.save(ManagedObjectContext(store: store))
            let heard = try nextEvents(listener)
            guard case .change(let change)? = heard.first, heard.count == 1 else {
                Issue.record("expected one change, got \(heard)")
                return
            }
            #expect(change.inserted == [try #require(second.objectID)])
        }
    }

    @Test func pollingWithoutWaitingWhileDisconnectedNeverThrowsAndFindsTheGap() throws {
        try withListener { _, listener, kill in
            try kill()
            var gap = false
            for _ in 0..<500 where !gap {
                gap = try listener.events(timeout: .zero).contains { event in
                    if case .mayHaveMissedChanges = event { true } else { false }
                }
                if !gap { Thread.sleep(forTimeInterval: 0.01) }
            }
            #expect(gap)
            #expect(listener.lastReconnectError == nil)
        }
    }

    @Test func nextThrowsOnceAfterAGapAndThenHearsChanges() throws {
        try withListener { store, listener, kill in
            try kill()
            var thrown: PostgresStoreError?
            for _ in 0..<50 where thrown == nil {
                do {
                    _ = try listener.next(timeout: .milliseconds(200))
                } catch let error as PostgresStoreError {
                    thrown = error
                }
            }
            #expect(thrown?.code == .changesMayHaveBeenMissed)
            var car = Car.sample("heard")
            try car.save(ManagedObjectContext(store: store))
            var heard: [StoreChange] = []
            for _ in 0..<50 where heard.isEmpty { heard = try listener.next(timeout: .milliseconds(200)) }
            #expect(heard.flatMap(\.inserted) == [try #require(car.objectID)])
        }
    }

    @Test func aClosedListenerThrows() throws {
        try withListener { _, listener, _ in
            listener.close()
            #expect(!listener.isUsable)
            #expect {
                try listener.events(timeout: .zero)
            } throws: { error in
                (error as? LibPQError)?.code == .connectionClosed
            }
        }
    }
}
