@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// `CoreValueTesting`: a migrated schema per test, dropped afterwards, sync and async.
@Suite struct TestSchemaTests {
    private struct Failure: Error {}

    private func schemaExists(_ url: String, _ name: String) throws -> Bool {
        let connection = try Connection(url)
        defer { connection.close() }
        let result = try connection.query(
            "SELECT count(*) FROM pg_namespace WHERE nspname = $1", [try PostgresValue(name)])
        return try result.decode(Int64.self, row: 0, column: 0) == 1
    }

    @Test func aSchemaMigratedFromTheModelIsDroppedAfterwardsEvenWhenTheTestFails() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        var seen: (url: String, name: String)?
        #expect(throws: Failure.self) {
            try TestSchema.with(model: ExampleModel.model) { schema in
                seen = (schema.url, schema.name)
                let store = schema.store
                try Author(id: "a", name: "A").save(ManagedObjectContext(store: store))
                #expect(try store.fetch(FetchRequest(entityName: "Author")).count == 1)
                #expect(try schemaExists(schema.url, schema.name))
                throw Failure()
            }
        }
        let (url, name) = try #require(seen)
        #expect(try !schemaExists(url, name))
    }

    @Test func theAsyncFormUsesMigrationFilesAndTheConfiguration() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        let (url, name) = try await TestSchema.with(
            model: ExampleModel.model, migrations: TestDatabase.migrationsDirectory, configure: { $0.poolSize = 1 }
        ) { schema in
            let store = schema.store
            #expect(store.configuration.poolSize == 1 && store.schema == schema.name)
            try await [Author(id: "x", name: "X")].saveAll(ManagedObjectContext(store: store))
            let history = try Connection(schema.url).query(
                "SELECT count(*) FROM \(SQLIdentifier(Migrator.historyTable, schema: schema.name).quoted)")
            #expect(try history.decode(Int64.self, row: 0, column: 0) > 0)
            return (schema.url, schema.name)
        }
        #expect(try !schemaExists(url, name))
    }
}

/// The README's `CoreValueTesting` example, as written there (with the quick start's `Person` and model).
private struct Person: CVManagedPersistentStruct {
    static let EntityName = "Person"
    var objectID: ManagedObjectID?
    var name: String
    var age: Int16

    static func fromObject(_ o: ManagedObject) throws -> Person {
        try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <| "age"
    }
}

@Test(.enabled(if: TestSchema.isAvailable)) func savesAPerson() async throws {
    let model = try ManagedObjectModel {
        Entity("Person") {
            Attribute("name", .string)
            Attribute("age", .int16)
        }
    }
    // From here on, the README's example line for line.
    try await TestSchema.with(model: model) { schema in  // or migrations: URL(fileURLWithPath: "migrations")
        let context = ManagedObjectContext(store: schema.store)
        var alice = Person(name: "Alice", age: 34)
        try await alice.save(context)
        let people: [Person] = try await Person.query(context, predicate: nil)
        #expect(people.count == 1)
    }
}
