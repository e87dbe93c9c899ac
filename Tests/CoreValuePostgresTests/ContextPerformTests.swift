@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

/// `ManagedObjectContext.perform(_:)`: a unit of synchronous context work on a store thread, one handoff there
/// and one back for all of it.
@Suite struct ContextPerformTests {
    @Test func aReadChangeSaveInOnePerformRunsOnAStoreThreadAndReturnsItsValue() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 1 }) { store, _, _ in
            try await Author(id: "a", name: "Ann").save(ManagedObjectContext(store: store))
            #expect(!store.runsBlockingWorkHere)
            /// A request: read, change, save, in one `perform` of a fresh context.
            func rename(to name: String) async throws -> (name: String, onStoreThread: Bool) {
                let context = ManagedObjectContext(store: store)
                return try await context.perform {
                    var ann: [Author] = try Author.query(context, predicate: .key("id") == "a")
                    ann[0].name = name
                    try ann[0].save(context)
                    return (ann[0].name, store.runsBlockingWorkHere)
                }
            }
            // The first run prepares the connection's statements.
            _ = try await rename(to: "Anna")
            let before = store.statistics
            let renamed = try await rename(to: "Anne")
            #expect(renamed.name == "Anne" && renamed.onStoreThread)
            // The same statements and round trips as the two async calls: one read, one save.
            let spent = store.statistics.since(before)
            #expect(spent.statements == 2 && spent.roundTrips == 2)
            let stored: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(stored.map(\.name) == ["Anne"])
        }
    }

    @Test func whatTheBodyThrowsReachesTheCallerAndNothingOfTheUnsavedWorkIsWritten() async throws {
        struct Refused: Error {}
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 1 }) { store, _, _ in
            let context = ManagedObjectContext(store: store)
            await #expect(throws: Refused.self) {
                try await context.perform {
                    try Author(id: "b", name: "Bob").toObject(context)
                    throw Refused()
                }
            }
            let stored: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(stored.isEmpty)
            // The context keeps the boxed change, as after a synchronous call that threw later.
            #expect(context.hasChanges)
        }
    }

    @Test func aCancelledTaskDoesNotRunTheBody() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 1 }) { store, _, _ in
            let ran = Flag()
            let outcome = await Task { () -> (any Error)? in
                withUnsafeCurrentTask { $0?.cancel() }
                let context = ManagedObjectContext(store: store)
                do {
                    try await context.perform {
                        ran.set()
                        try Author(id: "x", name: "never").save(context)
                    }
                    return nil
                } catch {
                    return error
                }
            }.value
            #expect(outcome is CancellationError)
            #expect(!ran.isSet)
            let stored: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(stored.isEmpty)
        }
    }

    @Test func aTaskPreferringTheStoresExecutorRunsTheBodyWhereItIs() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 1 }) { store, _, _ in
            let count = try await Task(executorPreference: store.taskExecutor) {
                let context = ManagedObjectContext(store: store)
                return try await context.perform {
                    try Author(id: "p", name: "Pat").save(context)
                    return try Author.count(context, predicate: nil)
                }
            }.value
            #expect(count == 1)
        }
    }

    /// A body that sets a flag from another thread.
    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }
}
