@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `queryStored` reuses one ephemeral object for row after row; a `fromObject` that keeps its object must
/// still see each row's own values in it.
@Suite struct QueryStoredObjectTests {
    /// A struct that keeps the object it was read from (unusual, but the seed's API allows it).
    struct Keeper: UnboxingStruct {
        typealias StructureType = Keeper
        let id: Int32
        let object: ManagedObject

        static func fromObject(_ object: ManagedObject) throws -> Keeper {
            Keeper(id: try object.value(forKey: "id", as: Int32.self) ?? -1, object: object)
        }
    }

    @Test func aStructThatKeepsItsObjectGetsAnObjectOfItsOwn() throws {
        let store = MemoryStore(model: ExampleModel.model)
        try (1...5).map { Product(id: Int32($0), name: "p\($0)", price: 1) }.saveAll(ManagedObjectContext(store: store))
        let kept: [Keeper] = try Product.queryStored(
            store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
        #expect(kept.map(\.id) == [1, 2, 3, 4, 5])
        // Every struct's object still holds its own row.
        #expect(try kept.map { try $0.object.value(forKey: "id", as: Int32.self) } == [1, 2, 3, 4, 5])
        #expect(Set(kept.map { ObjectIdentifier($0.object) }).count == 5)
    }

    @Test func structsThatKeepNothingShareTheWork() throws {
        let store = MemoryStore(model: ExampleModel.model)
        try (1...5).map { Product(id: Int32($0), name: "p\($0)", price: Decimal($0)) }
            .saveAll(ManagedObjectContext(store: store))
        let read: [Product] = try Product.queryStored(
            store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
        #expect(read == (1...5).map { Product(id: Int32($0), name: "p\($0)", price: Decimal($0)) })
    }
}
