@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

/// The store-generic behaviour suite against `MemoryStore`, through both APIs.
@Test(arguments: StoreSuite.all, APIMode.allCases)
func memoryStoreBehaviour(_ check: SuiteCase, _ api: APIMode) async throws {
    try await check.run({ MemoryStore(model: ExampleModel.model) }, api)
}
