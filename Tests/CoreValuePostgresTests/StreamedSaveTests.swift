@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// A bulk `saveAll` of new unique structs: boxed in parts that `PostgresStore` pipelines in one transaction.
@Suite struct StreamedSaveTests {
    /// Products with identifiers in descending order (not the order they are written in), the one with
    /// identifier 7 twice, far apart: the last one's values must win.
    static func products(_ count: Int, name: (Int32) -> String = { "p\($0)" }) -> [Product] {
        var products = (1...Int32(count)).reversed().map { Product(id: $0, name: name($0), price: Decimal($0)) }
        products.append(Product(id: 7, name: "last", price: 77))
        return products
    }

    static func storedCount(_ store: PostgresStore) throws -> Int {
        try store.count(FetchRequest(entityName: "Product"))
    }

    /// The pipelined path (`writesThroughCopy` off; with it, new rows go in one COPY: see
    /// `PlainBulkInsertTests`).
    @Test func aBulkSaveAllIsPipelinedInOneTransactionOfConstantRoundTrips() throws {
        try TestDatabase.withExampleStore(configure: { $0.writesThroughCopy = false }) { store, _, _ in
            func save(_ count: Int) throws -> StoreStatistics {
                let context = ManagedObjectContext(store: store)
                let before = store.statistics
                try Self.products(count).saveAll(context)
                let used = store.statistics.since(before)
                #expect(!context.hasChanges)
                return used
            }
            let small = try save(4_500)
            // One probe for stored identifiers, then the 4,501 products (7 twice) in parts of 500, 2,000,
            // 2,000 and 1: four statements, sent in one pipeline, then COMMIT; BEGIN and the commit identifier
            // (one more statement) go with the probe.
            #expect(small.statements == 6)
            #expect(small.transactions == 1)
            // The probe goes with BEGIN in a pipeline, so its preparation costs no round trip either; the parts
            // share one text (their rows are bound as arrays): two statements prepared in all.
            #expect(small.roundTrips == 3)
            // Without a cache (make test-ha through pgbouncer), nothing is prepared.
            let prepares = TestDatabase.statementCacheSize != 0
            #expect(small.statementsPrepared == (prepares ? 3 : 0))
            let stored: [Product] = try Product.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
            #expect(stored.count == 4_500)
            #expect(stored.map(\.id) == Array(1...4_500))
            #expect(stored[6] == Product(id: 7, name: "last", price: 77))
            #expect(stored[99] == Product(id: 100, name: "p100", price: 100))

            // Saved again over the stored rows: every one updated, more parts, the same round trips.
            let large = try save(9_000)
            #expect(large.statements == 8)
            // The probe is run by name now; the parts are upserts this time, another statement, prepared in
            // the pipeline: no round trip for it.
            #expect(large.roundTrips == 3)
            #expect(large.statementsPrepared == (prepares ? 1 : 0))
            #expect(try Self.storedCount(store) == 9_000)
            let versions = try store.fetch(
                FetchRequest(entityName: "Product", predicate: .comparison(key: "id", .lessThanOrEqual, .int32(4_500))))
            #expect(versions.allSatisfy { $0.version == 2 })
        }
    }

    @Test func theContextKnowsEveryStreamedObjectAsSaved() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            // Some rows exist already (every seventh, saved in reverse order), so keys do not follow the ids.
            try Self.products(4_500).enumerated().filter { $0.offset.isMultiple(of: 7) }.map(\.element).reversed()
                .saveAll(ManagedObjectContext(store: store))
            let context = ManagedObjectContext(store: store)
            try Self.products(4_500).saveAll(context)
            let objects = context.registeredObjects(entityName: "Product")
            #expect(objects.count == 4_500)
            #expect(objects.allSatisfy { !$0.objectID.isTemporary && !$0.hasChanges })
            // Each object got its own row's key and version (the store reports them by stream position).
            let rows = try store.fetch(FetchRequest(entityName: "Product"))
            let stored = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0.attributes["id"]) })
            #expect(objects.allSatisfy { stored[$0.objectID] == (try? $0.value(forKey: "id")) })
            // The same context then saves one of them again through the usual path: an update of its row.
            let before = store.statistics
            try Product(id: 5, name: "again", price: 5).save(context)
            #expect(store.statistics.since(before).statements == 1)
            let five = try store.fetch(
                FetchRequest(entityName: "Product", predicate: .comparison(key: "id", .equal, .int32(5))))
            #expect(five.map { $0.attributes["name"] } == [.string("again")])
            #expect(five.first?.version == 2)
        }
    }

    @Test func aServerErrorInALaterPartWritesNothingAndTheContextForgetsTheStructs() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            let table = SQLIdentifier("Product", schema: schema).quoted
            try TestDatabase.execute(url, "ALTER TABLE \(table) ADD CONSTRAINT no_poison CHECK (name <> 'poison')")
            let context = ManagedObjectContext(store: store)
            // Identifier 300 is written in the first part (1-500), 2,000 in the second, 4,400 in the third.
            for poisoned: Int32 in [300, 2_000, 4_400] {
                let products = Self.products(4_500) { $0 == poisoned ? "poison" : "p\($0)" }
                #expect {
                    try products.saveAll(context)
                } throws: { error in
                    (error as? PostgresStoreError)?.sqlState == .checkViolation
                }
                #expect(try Self.storedCount(store) == 0)
                #expect(!context.hasChanges)
                #expect(context.registeredObjects(entityName: "Product").isEmpty)
            }
            // Mended, the same call through the same context saves everything once.
            try Self.products(4_500).saveAll(context)
            #expect(try Self.storedCount(store) == 4_500)
        }
    }

    /// The rows of a large fetch come in parts (so that no array holds them all): the same rows, in the same
    /// order, as one `fetch`, and a context registers them all, in order, each once.
    @Test func aLargeFetchIsReadInPartsInOrderAndRegisteredOnce() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            try Self.products(9_000).saveAll(ManagedObjectContext(store: store))
            let request = FetchRequest(entityName: "Product", sortDescriptors: [CVSortDescriptor(key: "id")])
            let parts = try store.fetchInParts(request)
            #expect(parts.map(\.count) == Array(repeating: 1_024, count: 8) + [808])
            #expect(parts.joined().map(\.id) == (try store.fetch(request)).map(\.id))
            let before = store.statistics
            let context = ManagedObjectContext(store: store)
            let objects = try context.fetch(request)
            #expect(store.statistics.since(before).statements == 1)
            let ids = try objects.map { try #require($0.objectID.primaryKey) }
            #expect(ids == ids.sorted() && Set(ids).count == 9_000)
            let products: [Product] = try objects.map { try Product.fromObject($0) }
            #expect(products.map(\.id) == Array(1...9_000))
            #expect(products[6] == Product(id: 7, name: "last", price: 77))
            #expect(context.registeredObjects(entityName: "Product").count == 9_000)
            // Fetched again into the same context: the registered objects, not new ones.
            let again = try context.fetch(request)
            #expect(zip(again, objects).allSatisfy { $0 === $1 })
        }
    }

    @Test func aValueTheStoreRefusesInALaterPartWritesNothing() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let context = ManagedObjectContext(store: store)
            let products = Self.products(4_500) { $0 == 4_400 ? "nul\u{0}here" : "p\($0)" }
            #expect {
                try products.saveAll(context)
            } throws: { error in
                (error as? PostgresStoreError)?.code == .invalidValue
            }
            let stored = try Self.storedCount(store)
            #expect(stored == 0)
            #expect(!context.hasChanges)
        }
    }

    @Test func aConnectionKilledMidStreamIsRetriedWithTheSamePartsAndSavesEachStructOnce() throws {
        let killer = KillOnce()
        try TestDatabase.withExampleStore(poolSize: 1) { configuration in
            // The pipelined path; `PlainBulkInsertTests` kills a COPY.
            configuration.writesThroughCopy = false
            configuration.onEvent = { event in
                // Once the second part's upsert went out: the store's backend is terminated while the
                // third part is still being boxed.
                guard event.kind == .statement, event.sql?.hasPrefix("INSERT INTO") == true else { return }
                killer.count += 1
                if killer.count == 2 { killer.kill() }
            }
        } _: { store, url, schema in
            killer.url = url
            killer.schema = schema
            let context = ManagedObjectContext(store: store)
            let before = store.statistics
            try Self.products(4_500).saveAll(context)
            #expect(killer.killed == 1)
            #expect(store.statistics.since(before).retries == 1)
            #expect(!context.hasChanges)
            // The retry handed the parts over again from the objects the first attempt boxed: one object per
            // struct, each with its row's permanent ID, none boxed twice.
            let registered = context.registeredObjects(entityName: "Product")
            #expect(registered.count == 4_500)
            #expect(registered.allSatisfy { !$0.objectID.isTemporary })
            #expect(Set(registered.map(\.objectID)).count == 4_500)
            let stored: [Product] = try Product.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
            #expect(stored.map(\.id) == Array(1...4_500))
            #expect(stored[6] == Product(id: 7, name: "last", price: 77))
            let versions = try store.fetch(FetchRequest(entityName: "Product")).map(\.version)
            // Written once: the killed attempt rolled back.
            #expect(versions.allSatisfy { $0 == 1 })
        }
    }

    /// Terminates the store's backend (the one whose last statement names the test's schema) once.
    final class KillOnce: @unchecked Sendable {
        var url = ""
        var schema = ""
        var count = 0
        var killed = 0

        func kill() {
            guard let admin = try? Connection(url) else { return }
            defer { admin.close() }
            let result = try? admin.query(
                "SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity "
                    + "WHERE pid <> pg_backend_pid() AND query LIKE $1",
                [try PostgresValue("%" + schema + "%")])
            killed = (try? result?.decode(Int64.self, row: 0, column: 0)).flatMap { $0 }.map(Int.init) ?? 0
        }
    }

    @Test func twoBulkLoadsOfOverlappingStructsInOppositeOrdersDoNotDeadlock() throws {
        let retried = ErrorBox()
        try TestDatabase.withExampleStore(poolSize: 2) { configuration in
            configuration.onEvent = { event in
                if event.kind == .retry, let error = event.error { retried.append(error) }
            }
        } _: { store, _, _ in
            let errors = ErrorBox()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                do {
                    for round in 0..<2 {
                        // Overlapping but different rows (the second writer skips every third), in opposite
                        // input orders, so that the writers' parts end at different identifiers.
                        var ids = Array(Int32(1)...Int32(6_000))
                        if worker == 1 { ids = ids.filter { $0 % 3 != 0 }.reversed() }
                        try ids.map { Product(id: $0, name: "w\(worker) r\(round)", price: 1) }
                            .saveAll(ManagedObjectContext(store: store))
                    }
                } catch {
                    errors.append(error)
                }
            }
            #expect(errors.all.isEmpty, "\(errors.all)")
            // No deadlock, no serialization failure. Both first loads may insert plainly into the empty table;
            // the one that finds an identifier taken by the other writes its stream again with upserts.
            let states = retried.all.map { ($0 as? DatabaseError)?.sqlState }
            #expect(states.allSatisfy { $0 == .uniqueViolation }, "\(retried.all)")
            #expect(states.count <= 1)
            let stored = try Self.storedCount(store)
            #expect(stored == 6_000)
        }
    }

    /// Reads another row through the store while it is unboxed (unusual, but `fromObject` is the user's).
    struct Nosy: UnboxingStruct {
        typealias StructureType = Nosy
        let id: Int32
        let neighbour: String?
        /// The store `fromObject` reads through (set by one test, whose cases run one after the other).
        nonisolated(unsafe) static var store: PostgresStore?

        static func fromObject(_ object: ManagedObject) throws -> Nosy {
            let id: Int32 = try object <| "id"
            guard id % 1_000 == 0, let store else { return Nosy(id: id, neighbour: nil) }
            let next: [Product] = try Product.queryStored(store, predicate: .key("id") == id + 1)
            return Nosy(id: id, neighbour: next.first?.name)
        }
    }

    /// `query` unboxes each part of a large fetch while the store reads the next, in order, with one
    /// statement; a `fromObject` that reads through the store meanwhile is served, also with a pool of one
    /// connection (whose parts come once the read is done).
    @Test(.serialized, arguments: [1, 4])
    func aLargeQueryUnboxesWhileItReadsAndFromObjectMayReadTheStore(poolSize: Int) throws {
        try TestDatabase.withExampleStore(poolSize: poolSize) { store, _, _ in
            try Self.products(4_500).saveAll(ManagedObjectContext(store: store))
            let context = ManagedObjectContext(store: store)
            let before = store.statistics
            let products: [Product] = try Product.query(
                context, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
            #expect(store.statistics.since(before).statements == 1)
            #expect(products.map(\.id) == Array(1...4_500))
            #expect(context.registeredObjects(entityName: "Product").count == 4_500)
            Nosy.store = store
            defer { Nosy.store = nil }
            let nosy: [Nosy] = try Product.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
            #expect(nosy.map(\.id) == Array(1...4_500))
            #expect(nosy.compactMap(\.neighbour) == ["p1001", "p2001", "p3001", "p4001"])
        }
    }
}
