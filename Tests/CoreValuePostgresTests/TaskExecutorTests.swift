@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Testing

/// `PostgresStore.taskExecutor`: a task that prefers it runs on the store's threads, and its async calls do
/// their blocking work where the task is, without a handoff there and back.
@Suite struct TaskExecutorTests {
    @Test func aTaskPreferringTheStoresExecutorRunsItsCallsWhereItIs() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 2 }) { store, _, _ in
            #expect(!store.runsBlockingWorkHere)
            let names = try await Task(executorPreference: store.taskExecutor) {
                // On one of the store's threads: its calls run here.
                #expect(store.runsBlockingWorkHere)
                let context = ManagedObjectContext(store: store)
                try await [Author(id: "a", name: "Ann"), Author(id: "b", name: "Bob")].saveAll(context)
                let before = store.statistics
                let fresh = ManagedObjectContext(store: store)
                var ann: [Author] = try await Author.query(fresh, predicate: .key("id") == "a")
                #expect(store.statistics.since(before).statements == 1)
                ann[0].name = "Anne"
                try await ann[0].save(fresh)
                let all: [Author] = try await Author.query(
                    ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
                return all.map(\.name)
            }.value
            #expect(names == ["Anne", "Bob"])
        }
    }

    /// More tasks than the store has threads: each runs its calls on a thread while it has one, and the rest
    /// wait their turn; none waits for a connection another queued task would free.
    @Test func moreTasksThanThreadsPreferringTheExecutorAllFinish() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 2 }) { store, _, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask(executorPreference: store.taskExecutor) {
                        for round in 0..<5 {
                            let context = ManagedObjectContext(store: store)
                            try await Author(id: "t\(task)-\(round)", name: "n\(round)").save(context)
                            let found: [Author] = try await Author.query(
                                context, predicate: .key("id") == "t\(task)-\(round)")
                            #expect(found.map(\.name) == ["n\(round)"])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let all: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(all.count == 80)
        }
    }

    @Test func aCancelledTaskPreferringTheExecutorDoesNotRunItsCall() async throws {
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 2 }) { store, _, _ in
            let outcome = await Task(executorPreference: store.taskExecutor) { () -> Error? in
                withUnsafeCurrentTask { $0?.cancel() }
                do {
                    try await Author(id: "x", name: "never").save(ManagedObjectContext(store: store))
                    return nil
                } catch {
                    return error
                }
            }.value
            #expect(outcome is CancellationError)
            let all: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(all.isEmpty)
        }
    }

    /// Once its store is gone (its threads end), a task preferring the executor still runs, elsewhere.
    @Test func aTaskPreferringTheExecutorOfAStoreThatIsGoneStillRuns() async throws {
        var executor: (any TaskExecutor)?
        try await TestDatabase.withExampleStore(configure: { $0.poolSize = 1 }) { store, _, _ in
            executor = store.taskExecutor
        }
        let value = await Task(executorPreference: executor) { 42 }.value
        #expect(value == 42)
    }
}
