@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// `TestSchema.withTransaction`: a test's work in one transaction rolled back at the end, on a schema the
/// process's tests share (migrated once from the example model's DDL).
@Suite struct TransactionSandboxTests {
    private struct Failure: Error {}

    /// A sandbox on the example model, with the tests' statement cache size (off through pgbouncer).
    static func withSandbox<T>(
        configure: (inout PostgresStore.Configuration) -> Void = { _ in }, _ body: (TestSchema) throws -> T
    ) throws -> T {
        try TestSchema.withTransaction(
            model: ExampleModel.model,
            configure: { configuration in
                if let size = TestDatabase.statementCacheSize { configuration.preparedStatementCacheSize = size }
                configure(&configuration)
            }, body)
    }

    /// A sandbox on the example model (async body), with the tests' statement cache size.
    static func withSandbox<T>(
        configure: (inout PostgresStore.Configuration) -> Void = { _ in }, _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        try await TestSchema.withTransaction(
            model: ExampleModel.model,
            configure: { configuration in
                if let size = TestDatabase.statementCacheSize { configuration.preparedStatementCacheSize = size }
                configure(&configuration)
            }, body)
    }

    /// The authors with `id`, counted on a connection of its own (as another process would see them).
    static func authorsSeenFromOutside(_ schema: TestSchema, id: String) throws -> Int64 {
        let connection = try Connection(schema.url)
        defer { connection.close() }
        let sql = "SELECT count(*) FROM \(SQLIdentifier("Author", schema: schema.name).quoted) WHERE id = $1"
        return try connection.query(sql, [try PostgresValue(id)]).decode(Int64.self, row: 0, column: 0)
    }

    static func uniqueID() -> String { "sandbox-" + UUID().uuidString }

    static func authors(_ store: PostgresStore, id: String) throws -> Int {
        try store.fetch(FetchRequest(entityName: "Author", predicate: .key("id") == id)).count
    }

    @Test func whatATestSavesIsVisibleToItAloneAndGoneAfterwards() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let id = Self.uniqueID()
        let seen = try Self.withSandbox { schema in
            #expect(schema.name.hasPrefix("cvtest_tx_") && schema.store.schema == schema.name)
            try Author(id: id, name: "Ann").save(ManagedObjectContext(store: schema.store))
            #expect(try Self.authors(schema.store, id: id) == 1)
            // Never committed: another connection does not see it.
            #expect(try Self.authorsSeenFromOutside(schema, id: id) == 0)
            return schema
        }
        #expect(try Self.authorsSeenFromOutside(seen, id: id) == 0)
        // The schema is shared, and kept: the next test finds it migrated, and empty of the last one's rows.
        try Self.withSandbox { schema throws in
            #expect(schema.name == seen.name)
            #expect(try Self.authors(schema.store, id: id) == 0)
        }
        // The store went with its sandbox.
        #expect(throws: PostgresStoreError.self) { try seen.store.fetch(FetchRequest(entityName: "Author")) }
    }

    @Test func aBodyThatThrowsIsRolledBackToo() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let id = Self.uniqueID()
        var seen: TestSchema?
        #expect(throws: Failure.self) {
            try Self.withSandbox { schema in
                seen = schema
                try Author(id: id, name: "Ann").save(ManagedObjectContext(store: schema.store))
                throw Failure()
            }
        }
        let schema = try #require(seen)
        #expect(try Self.authorsSeenFromOutside(schema, id: id) == 0)
        try Self.withSandbox { schema throws in #expect(try Self.authors(schema.store, id: id) == 0) }
    }

    @Test func sandboxesOpenAtOnceSeeNoneOfEachOthersRows() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let (first, second) = (Self.uniqueID(), Self.uniqueID())
        // One inside the other: both transactions are open while each looks for the other's row.
        try Self.withSandbox { outer in
            try Author(id: first, name: "Outer").save(ManagedObjectContext(store: outer.store))
            try Self.withSandbox { inner in
                #expect(inner.name == outer.name)
                #expect(try Self.authors(inner.store, id: first) == 0)
                try Author(id: second, name: "Inner").save(ManagedObjectContext(store: inner.store))
                #expect(try Self.authors(outer.store, id: second) == 0)
                #expect(try Self.authors(inner.store, id: second) == 1)
            }
            #expect(try Self.authors(outer.store, id: first) == 1)
        }
        // And on threads of their own, in parallel: each counts only the cars it saved.
        let tag = Self.uniqueID()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sandbox in 1...4 {
                group.addTask {
                    try await Self.withSandbox { schema in
                        let context = ManagedObjectContext(store: schema.store)
                        for number in 1...sandbox {
                            var car = Fixtures.car("\(tag) \(number)")
                            try await car.save(context)
                        }
                        let cars = try await context.fetch(
                            FetchRequest(entityName: "Car", predicate: .key("name").beginsWith(tag)))
                        #expect(cars.count == sandbox)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func callsFromManyTasksTakeTurnsOnTheOneConnection() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let tag = Self.uniqueID()
        // A statement timeout puts every read in a transaction (a savepoint here) that starts with `SET LOCAL`.
        try await Self.withSandbox(configure: { $0.statementTimeout = .seconds(30) }) { schema in
            let store = schema.store
            #expect(store.configuration.poolSize == 1)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        let context = ManagedObjectContext(store: store)
                        try await Author(id: "\(tag)-\(task)", name: "Task \(task)").save(context)
                        let own: [Author] = try await Author.query(context, predicate: .key("id") == "\(tag)-\(task)")
                        #expect(own.map(\.name) == ["Task \(task)"])
                    }
                }
                try await group.waitForAll()
            }
            let all: [Author] = try await Author.query(
                ManagedObjectContext(store: store), predicate: .key("id").beginsWith(tag))
            #expect(all.count == 16)
        }
    }

    @Test func migrationFilesGiveASharedSchemaOfTheirOwn() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let files = TestDatabase.migrationsDirectory
        func name() throws -> String {
            try TestSchema.withTransaction(
                model: ExampleModel.model, migrations: files,
                configure: { configuration in
                    if let size = TestDatabase.statementCacheSize { configuration.preparedStatementCacheSize = size }
                }
            ) { schema in
                try Author(id: Self.uniqueID(), name: "Ann").save(ManagedObjectContext(store: schema.store))
                return schema.name
            }
        }
        let first = try name()
        #expect(try name() == first)
        #expect(try first != Self.withSandbox { $0.name })
        let connection = try Connection(try #require(TestDatabase.url))
        defer { connection.close() }
        let applied = try connection.query(
            "SELECT count(*) FROM \(SQLIdentifier(Migrator.historyTable, schema: first).quoted)")
        #expect(try applied.decode(Int64.self, row: 0, column: 0) > 0)
    }

    @Test func streamsFollowOneAnotherInOneSandbox() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let tag = Self.uniqueID()
        try Self.withSandbox { schema in
            let context = ManagedObjectContext(store: schema.store)
            for number in 1...3 {
                var car = Fixtures.car("\(tag) \(number)")
                try car.save(context)
            }
            // Each stream declares the same cursor, which its savepoint's release does not close.
            for _ in 1...2 {
                var rows = 0
                let request = FetchRequest(entityName: "Car", predicate: .key("name").beginsWith(tag))
                try schema.store.fetch(request, batchSize: 2) { batch in
                    rows += batch.count
                    return true
                }
                #expect(rows == 3)
            }
        }
    }
}
