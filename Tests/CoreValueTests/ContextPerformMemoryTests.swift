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
