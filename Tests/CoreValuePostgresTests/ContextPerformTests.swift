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
            let ran = Progress()
            let outcome = await Task { () -> (any Error)? in
                withUnsafeCurrentTask { $0?.cancel() }
                let context = ManagedObjectContext(store: store)
                do {
                    try await context.perform {
                        ran.add()
                        try Author(id: "x", name: "never").save(context)
                    }
                    return nil
                } catch {
                    return error
                }
            }.value
            #expect(outcome is CancellationError)
            #expect(ran.count == 0)
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

    /// 24 tasks on a pool of 2, each adding one to its own car's mileage in a `perform` 8 times, while a third
    /// of the tasks are cancelled part way: a perform that returned committed its increment once, one that threw
    /// committed nothing, and the pool ends with its connections healthy.
    @Test func cancelledPerformsLoseAndDuplicateNothingAndLeaveThePoolHealthy() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 2 }) { store, _, _ in
            var ids: [ManagedObjectID] = []
            for task in 0..<24 {
                var car = Car.sample("car \(task)")
                car.mileage = 0
                try await car.save(ManagedObjectContext(store: store))
                ids.append(try #require(car.objectID))
            }
            let carIDs = ids
            let counted = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for (task, id) in carIDs.enumerated() {
                    let progress = Progress()
                    let worker = Task { () -> Int in
                        for _ in 0..<8 {
                            let context = ManagedObjectContext(store: store)
                            do {
                                try await context.perform {
                                    var car = try Car.fromObject(try context.existingObject(with: id))
                                    car.mileage += 1
                                    try car.save(context)
                                }
                                progress.add()
                            } catch is CancellationError {
                                break
                            }
                        }
                        return progress.count
                    }
                    group.addTask {
                        if task % 3 == 0 {
                            // Once it has done a few: cancelled while its next perform queues, runs or commits.
                            // (Bounded: a worker that failed otherwise never gets there; its error fails the test.)
                            let deadline = ContinuousClock.now + .seconds(10)
                            while progress.count < 1 + task % 4, ContinuousClock.now < deadline {
                                try await Task.sleep(for: .microseconds(200))
                            }
                            worker.cancel()
                        }
                        return (task, try await worker.value)
                    }
                }
                var counted: [Int: Int] = [:]
                for try await (task, done) in group { counted[task] = done }
                return counted
            }
            let stored: [Car] = try await Car.query(ManagedObjectContext(store: store), predicate: nil)
            let mileage = Dictionary(uniqueKeysWithValues: stored.map { ($0.name, $0.mileage) })
            for task in 0..<24 {
                #expect(mileage["car \(task)"] == Int64(counted[task] ?? -1), "car \(task)")
            }
            // Every task not cancelled did all eight.
            #expect((0..<24).filter { $0 % 3 != 0 }.allSatisfy { counted[$0] == 8 })
            // The connections came back usable: reads on both at once still work.
            async let first: [Car] = Car.query(ManagedObjectContext(store: store), predicate: nil)
            async let second: [Car] = Car.query(ManagedObjectContext(store: store), predicate: nil)
            let (a, b) = try await (first, second)
            #expect(a.count == 24 && b.count == 24)
        }
    }

    /// How many times something ran, counted from any thread (performs a task finished, a body that ran).
    final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var done = 0
        func add() { lock.withLock { done += 1 } }
        var count: Int { lock.withLock { done } }
    }
}
