import CoreValue
import CoreValueExamples
import Testing

/// `ManagedObjectContext.perform(_:)` on the in-memory store: the same unit of work and result as on
/// PostgreSQL (ContextPerformTests there).
@Test func aPerformOnTheMemoryStoreReadsChangesAndSavesInOneCall() async throws {
    let store = MemoryStore(model: try ExampleModel.make())
    try await Author(id: "a", name: "Ann").save(ManagedObjectContext(store: store))
    let context = ManagedObjectContext(store: store)
    let name = try await context.perform {
        var ann: [Author] = try Author.query(context, predicate: .key("id") == "a")
        ann[0].name = "Anne"
        try ann[0].save(context)
        return ann[0].name
    }
    #expect(name == "Anne")
    let stored: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil)
    #expect(stored.map(\.name) == ["Anne"])
}

/// What `perform` returns crosses from the store's thread as `Any` and is cast back: every kind of result
/// comes back as it was returned, `nil` of an optional included.
@Test func aPerformReturnsOptionalsTuplesAndNothingUnchanged() async throws {
    let context = ManagedObjectContext(store: MemoryStore(model: try ExampleModel.make()))
    let none: Int? = try await context.perform { nil }
    #expect(none == nil)
    let some: Int?? = try await context.perform { .some(nil) }
    #expect(some == .some(nil))
    let pair = try await context.perform { (count: 2, name: "x") }
    #expect(pair.count == 2 && pair.name == "x")
    try await context.perform {}
    let authors: [Author] = try await context.perform { try Author.query(context, predicate: nil) }
    #expect(authors.isEmpty)
}
