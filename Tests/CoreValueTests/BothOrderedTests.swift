@_spi(StoreImplementation) import CoreValue
import Testing

/// BothOrderedSuite on MemoryStore.
@Test func aManyToManyOrderedOnBothSidesKeepsEachOrderInMemory() throws {
    let store = MemoryStore(model: try BothOrderedSuite.makeModel())
    try BothOrderedSuite.run(store, readers: [store])
}
