@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// Batch updates (issue 32, point 2, the update half): one statement sets values on every row a predicate
/// matches; versions move on so stale saves conflict; the calling context's objects are read again; both
/// stores answer the same, typed and untyped, sync and async; bad requests are refused before anything is sent.
@Suite struct BatchUpdateTests {
    static func employees() -> [Employee] {
        [
            Employee(name: "Ann", age: 30, position: "lead", department: "Sales", job: "seller"),
            Employee(name: "Bob", age: 52, position: nil, department: "Sales", job: "seller"),
            Employee(name: "Cy", age: 61, position: "head", department: "Ops", job: "operator"),
        ]
    }

    /// The employees a predicate matches, by age.
    static func people(_ context: ManagedObjectContext, _ predicate: CVPredicate?) throws -> [Employee] {
        try Employee.query(context, predicate: predicate, sortDescriptors: [CVPredicateKey.key("age").ascending])
    }

    static func exercise(_ store: any Store) async throws {
        var saved = employees()
        try await saved.saveAll(ManagedObjectContext(store: store))
        // A context that read the rows before the batch, and one that holds an unsaved change.
        let stale = ManagedObjectContext(store: store)
        let staleBob = try #require(try Self.people(stale, .key("name") == "Bob").first)
        let busy = ManagedObjectContext(store: store)
        var busyCy = try #require(try Self.people(busy, .key("name") == "Cy").first)
        busyCy.job = "planner"
        _ = try await busyCy.toObject(busy)
        _ = try Self.people(busy, .key("name") == "Bob")

        let result = try await Employee.batchUpdate(
            busy, set: [.set(\.department, to: "Archive"), .set(\.position, to: nil)],
            where: #Predicate { $0.age > 50 }, returningObjectIDs: true)
        #expect(result.count == 2)
        #expect(result.objectIDs == [saved[1].objectID, saved[2].objectID].compactMap { $0 })

        let fresh = ManagedObjectContext(store: store)
        let all = try Self.people(fresh, nil)
        #expect(all.map(\.department) == ["Sales", "Archive", "Archive"])
        #expect(all.map(\.position) == ["lead", nil, nil])
        // The calling context read Bob again; Cy keeps its unsaved change, and its save conflicts.
        let busyBob = try #require(try Self.people(busy, .key("name") == "Bob").first)
        #expect(busyBob.department == "Archive")
        await #expect(throws: CVManagedStructError.self) { try await busy.save() }
        // A context that read before the batch cannot overwrite it.
        var edited = staleBob
        edited.job = "buyer"
        await #expect(throws: CVManagedStructError.self) { try await edited.save(stale) }

        // Untyped; no match writes nothing; count only.
        let none = try await fresh.batchUpdate(
            BatchUpdateRequest(
                entityName: "Employee", predicate: .key("age") > Int64(100), values: ["job": .string("x")]))
        #expect(none == BatchResult(count: 0))
        let every = try await fresh.batchUpdate(BatchUpdateRequest(entityName: "Employee", values: ["age": .int64(40)]))
        #expect(every == BatchResult(count: 3))
        #expect(try Self.people(fresh, .key("age") == Int16(40)).count == 3)
    }

    /// Refused before anything is sent, and nothing changes.
    static func refusals(_ store: any Store) throws {
        var seeded = employees()
        try seeded.saveAll(ManagedObjectContext(store: store))
        let context = ManagedObjectContext(store: store)
        func refused(_ values: [String: AttributeValue], _ code: CVManagedStructError.Code) {
            let error = #expect(throws: CVManagedStructError.self) {
                _ = try context.batchUpdate(BatchUpdateRequest(entityName: "Employee", values: values))
            }
            #expect(error?.code == code, "\(values)")
        }
        refused([:], .structValueError)
        refused(["nope": .int64(1)], .unknownKey)
        refused(["age": .string("old")], .typeMismatch)
        refused(["age": .int64(70_000)], .typeMismatch)
        refused(["name": .null], .missingValue)
        let unique = #expect(throws: CVManagedStructError.self) {
            _ = try context.batchUpdate(
                BatchUpdateRequest(entityName: "Product", values: ["id": .int32(1)]))
        }
        #expect(unique?.code == .constraintViolation)
        #expect(throws: CVManagedStructError.self) {
            _ = try context.batchUpdate(BatchUpdateRequest(entityName: "Nope", values: ["a": .int64(1)]))
        }
        let untouched = try Self.people(ManagedObjectContext(store: store), nil)
        #expect(Set(untouched.map(\.age)) == [30, 52, 61])
    }

    @Test func memoryStoreBatchUpdates() async throws {
        try await Self.exercise(MemoryStore(model: ExampleModel.model))
        try Self.refusals(MemoryStore(model: ExampleModel.model))
    }

    @Test func postgresBatchUpdatesInOneStatement() async throws {
        try await TestDatabase.withExampleStore { store, _, _ in try await Self.exercise(store) }
        try await TestDatabase.withExampleStore { store, _, _ in
            try Self.refusals(store)
            let context = ManagedObjectContext(store: store)
            let before = store.statistics
            let result = try Employee.batchUpdate(
                context, set: [.set(\.job, to: "x")], where: #Predicate { $0.age < 40 })
            #expect(result.count == 1)
            // The UPDATE and the commit identifier (BEGIN and COMMIT go with them and are not counted).
            #expect(store.statistics.since(before).statements == 2)
            // NUL in text is refused by PostgreSQL's rule, before anything is sent.
            #expect(throws: PostgresStoreError.self) {
                _ = try Employee.batchUpdate(context, set: [.set(\.job, to: "a\u{0}b")])
            }
        }
    }
}
