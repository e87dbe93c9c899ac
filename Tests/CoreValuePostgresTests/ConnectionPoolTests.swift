@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

@Suite struct ConnectionPoolTests {
    /// Checks out `count` connections at once (nested) and runs `body` with all of them.
    static func withConnections(
        _ pool: ConnectionPool, _ count: Int, _ held: [Connection] = [], _ body: ([Connection]) throws -> Void
    )
        throws
    {
        guard held.count < count else { return try body(held) }
        try pool.withConnection { try withConnections(pool, count, held + [$0], body) }
    }

    @Test func aCheckoutThatFindsNoFreeConnectionTimesOutWithATypedError() throws {
        guard let url = TestDatabase.url else {
            return try TestDatabase.withSchema { _, _ in }
        }
        let pool = try ConnectionPool(
            configuration: try ConnectionConfiguration(url), capacity: 1, checkoutTimeout: .milliseconds(50))
        defer { pool.close() }
        _ = try pool.withConnection { _ in
            #expect {
                try pool.withConnection { _ in }
            } throws: { error in
                (error as? PostgresStoreError)?.code == .poolTimeout
            }
        }
        // The slot is free again afterwards.
        #expect(try pool.withConnection { try $0.query("SELECT 1").rowCount } == 1)
    }

    @Test func aNonPositiveTimeoutIsRejected() throws {
        #expect {
            try ConnectionPool(
                configuration: try ConnectionConfiguration("host=127.0.0.1"), capacity: 1, checkoutTimeout: .zero)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .invalidConfiguration
        }
    }

    @Test func aFetchAfterEveryPooledBackendWasTerminatedSucceeds() throws {
        try TestDatabase.withSchema { url, schema in
            _ = try Migrator(url: url, schema: schema).migrate(
                try Migration.load(from: TestDatabase.migrationsDirectory))
            // Five attempts: before the fix each one drew another stale connection and all of them failed.
            let store = try PostgresStore(
                model: try ExampleModel.make(),
                configuration: try .init(url: url, schema: schema).with {
                    $0.poolSize = 6; $0.maxAttempts = 5
                })
            defer { store.close() }
            var pids: [Int32] = []
            try Self.withConnections(store.pool, 6) { connections in
                pids = connections.map(\.backendPID)
            }
            #expect(Set(pids).count == 6)
            #expect(store.pool.idleCount == 6)
            let admin = try Connection(url)
            defer { admin.close() }
            let list = pids.map(String.init).joined(separator: ",")
            _ = try admin.query("SELECT pg_terminate_backend(pid) FROM unnest(ARRAY[\(list)]::int[]) AS pid")
            var remaining = 6
            for _ in 0..<500 where remaining > 0 {
                remaining = try admin.query(
                    "SELECT pid FROM pg_stat_activity WHERE pid = ANY(ARRAY[\(list)]::int[])"
                ).rowCount
                if remaining > 0 { Thread.sleep(forTimeInterval: 0.01) }
            }
            try #require(remaining == 0, "the terminated backends did not go away")
            let before = store.statistics
            #expect(try store.fetch(FetchRequest(entityName: "Car")).isEmpty)
            // The checkout's liveness check drops the dead connections; if a backend's socket was not closed
            // yet when it was checked, the lost connection makes the pool drop every idle one: one retry.
            #expect(store.statistics.since(before).retries <= 1)
            #expect(try store.fetch(FetchRequest(entityName: "Car")).isEmpty)
        }
    }

    @Test func openConnectionsConnectsThePoolAheadOfItsFirstRequests() throws {
        try TestDatabase.withExampleStore(poolSize: 3, configure: { $0.verifySchema = false }) { store, url, schema in
            #expect(store.pool.idleCount == 0)
            #expect(try store.openConnections(2) == 2)
            #expect(store.pool.idleCount == 2)
            // Up to the pool's size, counting the ones already open (a checked-out one among them).
            let whileOneIsOut = try store.pool.withConnection { _ in
                (opened: try store.openConnections(), idle: store.pool.idleCount)
            }
            #expect(whileOneIsOut.opened == 1 && whileOneIsOut.idle == 2)
            #expect(store.pool.idleCount == 3)
            #expect(try store.openConnections(10) == 0)
            // The opened connections serve requests: no connection is opened by the next three.
            let events = EventLog()
            let counting = try PostgresStore(
                model: try ExampleModel.make(),
                configuration: try .init(url: url, schema: schema).with {
                    $0.poolSize = 2; $0.verifySchema = false
                    $0.onEvent = { events.append($0) }
                })
            defer { counting.close() }
            func opened() -> Int { events.all.filter { $0.kind == .connectionOpened }.count }
            try counting.openConnections()
            #expect(opened() == 2)
            for _ in 0..<3 { _ = try counting.fetch(FetchRequest(entityName: "Car")) }
            #expect(opened() == 2)
            store.close()
            #expect {
                try store.openConnections()
            } throws: { error in
                (error as? PostgresStoreError)?.code == .poolClosed
            }
        }
    }

    @Test func openConnectionsReportsAServerItCannotReach() throws {
        // A port nothing listens on: the failure shows when the process connects, not at its first request.
        let store = try PostgresStore(
            model: try ExampleModel.make(),
            configuration: try .init(url: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2").with {
                $0.verifySchema = false
                $0.failoverBudget = .zero
            })
        defer { store.close() }
        #expect {
            try store.openConnections()
        } throws: { error in
            (error as? PostgresStoreError)?.code == .serverUnavailable
        }
        #expect(store.pool.idleCount == 0)
    }
}
