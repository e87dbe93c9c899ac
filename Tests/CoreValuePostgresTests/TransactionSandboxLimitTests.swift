@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
@testable import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Synchronization
import Testing

/// What goes wrong in a transaction sandbox: a failed save or read leaves it usable, and what cannot work
/// there (listeners, history, a call inside a call, a lost connection) throws its documented error.
@Suite struct TransactionSandboxLimitTests {
    private func insertCar(_ store: PostgresStore) throws -> ManagedObjectID {
        let id = ManagedObjectID.temporary("Car")
        let result = try store.apply(ChangeSet(inserts: [ObjectChange(id: id, attributes: StoreRoundTripTests.car(1))]))
        return try #require(result.permanentIDs[id])
    }

    private func isSandboxed(_ error: any Error) -> Bool { (error as? PostgresStoreError)?.code == .sandboxed }

    @Test func aFailedSaveRollsBackItsSavepointAndTheTestGoesOn() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try TransactionSandboxTests.withSandbox { schema in
            let store = schema.store
            let car = try insertCar(store)
            _ = try store.apply(
                ChangeSet(updates: [ObjectChange(id: car, version: 1, attributes: ["name": .string("second")])]))
            // A conflict: the row is at version 2 now.
            #expect {
                try store.apply(
                    ChangeSet(updates: [ObjectChange(id: car, version: 1, attributes: ["name": .string("stale")])]))
            } throws: { ($0 as? CVManagedStructError)?.code == .conflict }
            // A unique violation from the server, on the save's last statement.
            let product = Int32.random(in: 1...Int32.max)
            let twice = (0..<2).map { _ in
                ObjectChange(
                    id: .temporary("Product"),
                    attributes: ["id": .int32(product), "name": .string("p"), "price": .decimal(1)])
            }
            #expect { try store.apply(ChangeSet(inserts: twice)) } throws: {
                ($0 as? PostgresStoreError)?.sqlState == .uniqueViolation
            }
            // What came before the failures stands, and the sandbox takes more.
            #expect(try store.fetch(ids: [car]).first?.attributes["name"] == .string("second"))
            _ = try store.apply(ChangeSet(inserts: [twice[0]]))
            let products = try store.fetch(FetchRequest(entityName: "Product", predicate: .key("id") == product))
            #expect(products.count == 1)
        }
    }

    @Test func aFailedStatementOutsideASaveLeavesTheSandboxUsable() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let sandbox = try TransactionSandbox(
            configuration: try ConnectionConfiguration(try #require(TestDatabase.url)), statementCacheCapacity: 0,
            waitTimeout: .seconds(30))
        defer { sandbox.rollBack() }
        try sandbox.withConnection {
            try $0.execute("CREATE TEMPORARY TABLE sandboxed (x int); INSERT INTO sandboxed VALUES (1)")
        }
        // Caught inside the call, and thrown out of it: either way the call's savepoint is rolled back.
        try sandbox.withConnection { _ = try? $0.execute("SELECT 1 / 0") }
        #expect(throws: DatabaseError.self) { try sandbox.withConnection { try $0.execute("SELECT 1 / 0") } }
        let rows = try sandbox.withConnection { try $0.query("SELECT count(*) FROM sandboxed") }
        #expect(try rows.decode(Int64.self, row: 0, column: 0) == 1)
    }

    @Test func listenersAndHistoryThrowSandboxed() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try TransactionSandboxTests.withSandbox(configure: {
            $0.notificationChannel = "cv_sandbox"
            $0.recordsHistory = true
        }) { schema in
            let store = schema.store
            // A save with its NOTIFY and history record works; neither is ever seen, since nothing commits.
            _ = try insertCar(store)
            #expect { _ = try store.makeChangeListener() } throws: { isSandboxed($0) }
            #expect { _ = try store.makeHistoryListener(after: nil) } throws: { isSandboxed($0) }
            #expect { _ = try store.history(after: nil, limit: 10) } throws: { isSandboxed($0) }
            #expect { _ = try store.currentHistoryToken() } throws: { isSandboxed($0) }
            #expect(try store.fetch(FetchRequest(entityName: "Car")).count >= 1)
        }
    }

    @Test func aCallInsideACallOfTheSameThreadThrowsSandboxed() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try TransactionSandboxTests.withSandbox { schema in
            let store = schema.store
            #expect {
                _ = try store.apply(upserts: nil) { send in
                    _ = try store.fetch(FetchRequest(entityName: "Car"))
                    try send(
                        ChangeSet(inserts: [ObjectChange(id: .temporary("Car"), attributes: StoreRoundTripTests.car(2))]
                        ))
                }
            } throws: { isSandboxed($0) }
            _ = try insertCar(store)
        }
    }

    @Test func aCallFromAnotherThreadWaitsForTheOneHoldingTheConnection() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try TransactionSandboxTests.withSandbox(configure: { $0.checkoutTimeout = .milliseconds(200) }) { schema in
            let store = schema.store
            _ = try insertCar(store)
            let waited = Mutex<(any Error)?>(nil)
            try store.fetch(FetchRequest(entityName: "Car"), batchSize: 1) { _ in
                // The stream holds the connection until this returns: the other thread's call gives up.
                let done = DispatchGroup()
                done.enter()
                Thread {
                    defer { done.leave() }
                    do {
                        _ = try store.fetch(FetchRequest(entityName: "Car"))
                    } catch {
                        waited.withLock { $0 = error }
                    }
                }.start()
                done.wait()
                return false
            }
            #expect((waited.withLock { $0 } as? PostgresStoreError)?.code == .poolTimeout)
            #expect(try store.fetch(FetchRequest(entityName: "Car")).count == 1)
        }
    }

    @Test func aSandboxWhoseConnectionWasLostIsOver() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let url = try #require(TestDatabase.url)
        try TransactionSandboxTests.withSandbox { schema in
            let store = schema.store
            _ = try insertCar(store)
            let sandbox = try #require(store.sessions as? TransactionSandbox)
            let pid = try sandbox.withConnection {
                try $0.query("SELECT pg_backend_pid()").decode(Int32.self, row: 0, column: 0)
            }
            let killer = try Connection(url)
            defer { killer.close() }
            _ = try killer.query("SELECT pg_terminate_backend($1)", [try PostgresValue(pid)])
            #expect { try store.fetch(FetchRequest(entityName: "Car")) } throws: { isSandboxed($0) }
            #expect { try store.fetch(FetchRequest(entityName: "Car")) } throws: { isSandboxed($0) }
        }
    }
}
