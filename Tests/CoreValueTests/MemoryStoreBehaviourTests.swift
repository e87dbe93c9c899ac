@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

/// The store-generic behaviour suite against `MemoryStore`.
@Test(arguments: StoreSuite.all)
func memoryStoreBehaviour(_ check: SuiteCase) throws {
    try check.run { MemoryStore(model: ExampleModel.model) }
}
