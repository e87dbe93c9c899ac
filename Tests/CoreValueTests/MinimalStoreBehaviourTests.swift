@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

/// A store with nothing but `Store`'s requirements (a fetch, a fetch by IDs, a save), over a `MemoryStore`:
/// every refinement (`StoreRefinements`) is CoreValue's default, built on them.
final class MinimalStore: Store, @unchecked Sendable {
    let base: MemoryStore
    init(_ base: MemoryStore) { self.base = base }
    var model: ManagedObjectModel { base.model }
    func fetch(_ request: FetchRequest) throws -> [RowSnapshot] { try base.fetch(request) }
    func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] { try base.fetch(ids: ids) }
    func apply(_ changes: ChangeSet) throws -> SaveResult { try base.apply(changes) }
}

/// The store-generic behaviour suite against ``MinimalStore``, through both APIs: the defaults behave as a
/// store's own refinements do.
@Test(arguments: StoreSuite.all, APIMode.allCases)
func minimalStoreBehaviour(_ check: SuiteCase, _ api: APIMode) async throws {
    try await check.run({ MinimalStore(MemoryStore(model: ExampleModel.model)) }, api)
}
