@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

/// The store-generic behaviour suite against `MemoryStore`, through both APIs.
@Test(arguments: StoreSuite.all, APIMode.allCases)
func memoryStoreBehaviour(_ check: SuiteCase, _ api: APIMode) async throws {
    try await check.run({ MemoryStore(model: ExampleModel.model) }, api)
}

/// The history suite against `MemoryStore`, through both APIs.
@Test(arguments: HistorySuite.cases, APIMode.allCases)
func memoryStoreHistory(_ check: HistoryCase, _ api: APIMode) async throws {
    try await check.run({ MemoryStore(model: ExampleModel.model, recordsHistory: true, author: $0) }, api)
}

@Test func memoryStoreWithoutHistoryRefusesToRead() throws {
    let store = MemoryStore(model: ExampleModel.model)
    #expect(!store.recordsHistory)
    #expect { _ = try store.history(after: nil, limit: 10) } throws: { hasCode($0, .historyUnavailable) }
}
