@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// The async API: the seed's calls with `await`, on threads of the store, cancellable.
@Suite struct AsyncAPITests {
    /// A store on a fresh schema migrated to the example model (async body).
    func withStore(
        _ function: String = #function, poolSize: Int = 4,
        _ body: (PostgresStore, _ url: String, _ schema: String) async throws -> Void
    ) async throws {
        try await TestDatabase.withExampleStore(function, configure: { $0.poolSize = poolSize }, body)
    }

    @Test func theSeedsCallsWorkWithAwaitOnBothStores() async throws {
        let memory = MemoryStore(model: ExampleModel.model)
        try await roundTrip(memory)
        try await withStore { store, _, _ in try await roundTrip(store) }
    }

    private func roundTrip(_ store: any Store) async throws {
        let context = ManagedObjectContext(store: store)
        try await Author(id: "a", name: "Ann").save(context)
        try await [Author(id: "b", name: "Bob"), Author(id: "c", name: "Cy")].saveAll(context)
        var car = Fixtures.car("Async")
        try await car.save(context)
        #expect(car.objectID?.isTemporary == false)

        let fresh = ManagedObjectContext(store: store)
        let authors: [Author] = try await Author.query(
            fresh, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
        #expect(authors.map(\.name) == ["Ann", "Bob", "Cy"])
        let objects = try await fresh.fetch(FetchRequest(entityName: "Car"))
        #expect(try objects.map { try Car.fromObject($0) }.map(\.name) == ["Async"])
        let boxed = try await [Author(id: "a", name: "Anne")].toObjects(fresh)
        #expect(boxed.count == 1 && !boxed[0].isInserted)
        try await fresh.save()
        try await Author(id: "b", name: "Bob").delete(fresh)
        #expect(try await car.delete(fresh))

        let check = ManagedObjectContext(store: store)
        let left: [Author] = try await Author.query(
            check, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
        #expect(left.map(\.name) == ["Anne", "Cy"])
        #expect(try await check.fetch(FetchRequest(entityName: "Car")).isEmpty)
    }

    /// 64 tasks of saves and queries against a pool of 4 never starve a task of the cooperative pool: the
    /// work waits on the store's threads, not on the pool's.
    @Test func manyConcurrentCallsLeaveTheCooperativePoolFree() async throws {
        try await withStore(poolSize: 4) { store, _, _ in
            let beat = Task {
                var last = ContinuousClock.now
                var largest = Duration.zero
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                    let now = ContinuousClock.now
                    largest = max(largest, now - last)
                    last = now
                }
                return largest
            }
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<64 {
                    group.addTask {
                        let context = ManagedObjectContext(store: store)
                        for round in 0..<5 {
                            let authors = (0..<50).map { Author(id: "t\(task)-\(round)-\($0)", name: "n\($0)") }
                            try await authors.saveAll(context)
                            let found: [Author] = try await Author.query(
                                context, predicate: .key("name") == "n7", sortDescriptors: nil)
                            #expect(found.count >= round + 1)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = ContinuousClock.now - started
            beat.cancel()
            let largest = await beat.value
            let stored = try store.fetch(FetchRequest(entityName: "Author")).count
            #expect(stored == 64 * 5 * 50)
            // With blocking calls on the cooperative pool this heartbeat stalls for nearly the whole run (2.5 s
            // of 2.8 s on this machine, quiet); without, it ticks within milliseconds (23 ms). The bound is
            // relative only, so that a 2-core machine running other tests at once (everything 5-7x slower, and
            // behind pgbouncer 35 s for the run, with one gap of 2.8 s seen once in CI from a stalled machine)
            // passes, and blocking, which stalls it for most of the run, still fails. A third: a gap of a fifth
            // (0.79 s of 3.9 s) was seen once with the whole suite running in parallel on 2 cores.
            #expect(largest < elapsed / 3, "largest heartbeat gap \(largest) in \(elapsed)")
        }
    }

    /// A cancelled save stops its running statement on the server, commits nothing, throws
    /// `CancellationError`, and leaves the pool's one connection healthy.
    @Test func cancellingASaveCancelsItsStatementAndCommitsNothing() async throws {
        try await withStore(poolSize: 1) { store, url, schema in
            let table = SQLIdentifier("Author", schema: schema).quoted
            try TestDatabase.makeAuthorInsertsSleep(url, schema, seconds: 300)
            let save = Task {
                let context = ManagedObjectContext(store: store)
                try await Author(id: "slow", name: "S").save(context)
            }
            // Wait until the server sleeps in this test's insert (other tests sleep too), then cancel the task.
            try await waitUntil { try TestDatabase.isSleeping(url, inStatementOn: schema) }
            let cancelled = ContinuousClock.now
            save.cancel()
            await #expect(throws: CancellationError.self) { try await save.value }
            // The server stopped sleeping (300 s) at once.
            #expect(ContinuousClock.now - cancelled < .seconds(30))
            try TestDatabase.execute(url, "DROP TRIGGER cv_slow ON \(table)")
            #expect(try store.fetch(FetchRequest(entityName: "Author")).isEmpty)
            // The pool's only connection works again.
            let context = ManagedObjectContext(store: store)
            try await Author(id: "after", name: "A").save(context)
            #expect(try store.fetch(FetchRequest(entityName: "Author")).count == 1)
        }
    }

    @Test func aTaskCancelledBeforeTheCallSendsNothing() async throws {
        try await withStore { store, _, _ in
            let before = store.statistics.statements
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                let context = ManagedObjectContext(store: store)
                try await Author(id: "x", name: "X").save(context)
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(store.statistics.statements == before)
        }
    }

    @Test func theMigratorWorksWithAwait() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try await TestSchema.withEmpty { schema in
            let migrator = try Migrator(url: schema.url, schema: schema.name)
            let files = try Migration.load(from: TestDatabase.migrationsDirectory)
            let applied = try await migrator.migrate(files)
            #expect(applied.count == files.count && !files.isEmpty)
            #expect(try await migrator.status(files).allSatisfy { $0.state == .applied })
            #expect(try await migrator.migrate(files).isEmpty)
            #expect(try await migrator.diff(model: try ExampleModel.make()).statements.isEmpty)
        }
    }

    @Test func streamsHandOutEveryRowInOrderInBatches() async throws {
        try await streams(MemoryStore(model: ExampleModel.model), expectedStatements: nil)
        try await withStore { store, _, _ in try await streams(store, expectedStatements: 4) }
    }

    private func streams(_ store: any Store, expectedStatements: Int?) async throws {
        let authors = (1...2_500).map { Author(id: String(format: "a%05d", $0), name: "n\($0 % 7)") }
        try await authors.saveAll(ManagedObjectContext(store: store))
        let before = (store as? PostgresStore)?.statistics.statements
        var batches: [[Author]] = []
        try Author.stream(store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")], batchSize: 1_000) {
            (batch: [Author]) in batches.append(batch)
        }
        #expect(batches.map(\.count) == [1_000, 1_000, 500])
        #expect(batches.flatMap { $0 } == authors)
        if let expectedStatements, let before, let store = store as? PostgresStore {
            // DECLARE and three FETCHes (the third is short, so no fourth is sent); each row brings its
            // Author.articles keys (a join table) with it.
            #expect(store.statistics.statements - before == expectedStatements)
        }

        var streamed: [Author] = []
        let sequence: StructStream<Author> = Author.stream(
            store, predicate: .key("name") == "n3", sortDescriptors: [CVSortDescriptor(key: "id")], batchSize: 100)
        for try await author in sequence { streamed.append(author) }
        #expect(streamed == authors.filter { $0.name == "n3" })
    }

    /// Unboxing a streamed batch loads its relationships on the stream's own connection and snapshot: a pool
    /// of one is enough, sync and async.
    @Test func streamedStructsLoadTheirRelationshipsOnTheStreamsConnection() async throws {
        try await withStore(poolSize: 1) { store, _, _ in
            let authors = (0..<3).map { Author(id: "au\($0)", name: "A\($0)") }
            let articles = (1...25).map { index in
                Article(
                    id: Int64(index), title: "t\(index)", text: "x", author: authors[index % 3],
                    categories: [Fixtures.category("c\(index % 4)")])
            }
            try await articles.saveAll(ManagedObjectContext(store: store))
            var streamed: [Article] = []
            try Article.stream(store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")], batchSize: 10) {
                (batch: [Article]) in streamed += batch
            }
            #expect(streamed.map(\.author?.id) == articles.map(\.author?.id))
            #expect(streamed.map { $0.categories.map(\.name) } == articles.map { $0.categories.map(\.name) })
            var titles: [String] = []
            let sequence: StructStream<Article> = Article.stream(
                store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")], batchSize: 7)
            for try await article in sequence where article.author?.name == "A1" { titles.append(article.title) }
            #expect(titles == articles.filter { $0.author?.name == "A1" }.map(\.title))
        }
    }

    /// Leaving a stream early ends the store's read: the pool's only connection comes back.
    @Test func leavingAStreamEarlyReturnsItsConnection() async throws {
        try await withStore(poolSize: 1) { store, _, _ in
            let authors = (1...3_000).map { Author(id: "s\($0)", name: "n") }
            try await authors.saveAll(ManagedObjectContext(store: store))
            var seen = 0
            let sequence: StructStream<Author> = Author.stream(store, predicate: nil, batchSize: 100)
            for try await _ in sequence {
                seen += 1
                if seen == 150 { break }
            }
            #expect(seen == 150)
            let context = ManagedObjectContext(store: store)
            let all: [Author] = try await Author.query(context, predicate: nil)
            #expect(all.count == 3_000)
        }
    }

    private func waitUntil(_ condition: () throws -> Bool) async throws {
        // Generous: on a loaded 2-core machine the other suites' synchronous tests hold the cooperative pool.
        let deadline = ContinuousClock.now + .seconds(120)
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within 120 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
