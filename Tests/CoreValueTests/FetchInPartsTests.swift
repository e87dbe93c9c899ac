@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// A context registers (and `query` unboxes) each part a store hands over while the store reads the next, and
/// starts over when the store reads the rows again.
@Suite struct FetchInPartsTests {
    /// A `MemoryStore` that hands a fetch's rows over two at a time, optionally starting over once after the
    /// first part, and records how many structs had been unboxed when each part was handed over.
    final class PartedStore: StoreRefinements, @unchecked Sendable {
        let base: MemoryStore
        let restartsOnce: Bool
        var unboxedBeforePart: [Int] = []
        var onPart: () -> Int = { 0 }
        var fetchCalls = 0
        init(_ base: MemoryStore, restartsOnce: Bool) {
            self.base = base
            self.restartsOnce = restartsOnce
        }

        var model: ManagedObjectModel { base.model }
        func fetch(_ request: FetchRequest) throws -> [RowSnapshot] { try base.fetch(request) }
        func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] { try base.fetch(ids: ids) }
        func fetch(entityName: String, key: String, values: [AttributeValue]) throws -> [RowSnapshot] {
            try base.fetch(entityName: entityName, key: key, values: values)
        }
        func apply(_ changes: ChangeSet) throws -> SaveResult { try base.apply(changes) }
        func count(_ request: FetchRequest) throws -> Int { try base.count(request) }

        func fetch(_ request: FetchRequest, inParts body: (FetchedPart) throws -> Void) throws {
            fetchCalls += 1
            let rows = try base.fetch(request)
            func handOver(_ count: Int) throws {
                for start in stride(from: 0, to: count, by: 2) {
                    unboxedBeforePart.append(onPart())
                    try body(.rows(Array(rows[start..<min(start + 2, count)])))
                }
            }
            if restartsOnce, rows.count > 2 {
                try handOver(2)
                try body(.restart)
                unboxedBeforePart = []
            }
            try handOver(rows.count)
        }
    }

    static func products(_ count: Int) -> [Product] {
        (1...count).map { Product(id: Int32($0), name: "p\($0)", price: Decimal($0)) }
    }

    static func store(restartsOnce: Bool) throws -> PartedStore {
        let base = MemoryStore(model: ExampleModel.model)
        try Self.products(7).saveAll(ManagedObjectContext(store: base))
        return PartedStore(base, restartsOnce: restartsOnce)
    }

    static let byID = [CVSortDescriptor(key: "id")]

    @Test(arguments: [false, true])
    func aContextRegistersEveryPartOnceInOrder(restartsOnce: Bool) throws {
        let store = try Self.store(restartsOnce: restartsOnce)
        let context = ManagedObjectContext(store: store)
        let objects = try context.fetch(FetchRequest(entityName: "Product", sortDescriptors: Self.byID))
        #expect(try objects.map { try $0.value(forKey: "id", as: Int32.self) } == (1...7).map { Int32($0) })
        #expect(Set(objects.map(ObjectIdentifier.init)).count == 7)
        #expect(context.registeredObjects(entityName: "Product").count == 7)
        // Fetched again: the same objects.
        let again = try context.fetch(FetchRequest(entityName: "Product", sortDescriptors: Self.byID))
        #expect(zip(again, objects).allSatisfy { $0 === $1 })
    }

    @Test(arguments: [false, true])
    func queryReturnsEveryStructOnceInOrder(restartsOnce: Bool) throws {
        let store = try Self.store(restartsOnce: restartsOnce)
        let context = ManagedObjectContext(store: store)
        let products: [Product] = try Product.query(context, predicate: nil, sortDescriptors: Self.byID)
        #expect(products == Self.products(7))
        #expect(store.fetchCalls == 1)
        #expect(context.registeredObjects(entityName: "Product").count == 7)
    }

    /// Counts its unboxings (one test uses it).
    struct Counted: UnboxingStruct {
        typealias StructureType = Counted
        nonisolated(unsafe) static var unboxed = 0
        let id: Int32
        static func fromObject(_ object: ManagedObject) throws -> Counted {
            unboxed += 1
            return Counted(id: try object <| "id")
        }
    }

    @Test func queryUnboxesAPartBeforeTheStoreHandsOverTheNext() throws {
        let store = try Self.store(restartsOnce: false)
        let context = ManagedObjectContext(store: store)
        Counted.unboxed = 0
        store.onPart = { Counted.unboxed }
        let read: [Counted] = try Product.query(context, predicate: nil, sortDescriptors: Self.byID)
        #expect(read.map(\.id) == Array(1...7))
        // Product has no relationships: when each part came, every part before it had been unboxed.
        #expect(store.unboxedBeforePart == [0, 2, 4, 6])
    }

    @Test func aFailedUnboxingEndsTheFetchWithItsError() throws {
        let store = try Self.store(restartsOnce: false)
        let context = ManagedObjectContext(store: store)
        struct Strict: UnboxingStruct {
            typealias StructureType = Strict
            static func fromObject(_ object: ManagedObject) throws -> Strict {
                // `price` is a decimal: reading it as a string fails, with the seed's error.
                _ = try object <| "price" as String
                return Strict()
            }
        }
        #expect { try Product.query(context, predicate: nil) as [Strict] } throws: { error in
            (error as NSError).domain == CVErrorDomain
        }
        #expect(store.unboxedBeforePart.count == 1)
    }
}
