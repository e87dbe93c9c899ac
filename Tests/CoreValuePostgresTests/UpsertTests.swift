@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

@Suite struct UpsertTests {
    static func author(_ id: String, _ name: String) -> ObjectChange {
        ObjectChange(
            id: .temporary("Author"), attributes: ["id": .string(id), "name": .string(name)], upsertKey: "id")
    }

    @Test func twoAppliesWithTheSameIdentifierShareOneRow() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let first = Self.author("a-1", "First")
            let second = Self.author("a-1", "Second")
            let one = try store.apply(ChangeSet(inserts: [first]))
            let two = try store.apply(ChangeSet(inserts: [second]))
            let id = try #require(one.permanentIDs[first.id])
            #expect(two.permanentIDs[second.id] == id)
            #expect(two.versions[id] == 2)
            let rows = try store.fetch(FetchRequest(entityName: "Author"))
            #expect(rows.count == 1)
            #expect(rows.first?.attributes["name"] == .string("Second"))
        }
    }

    /// The upsert's result is matched to the rows sent: row by row when it comes back in their order, by
    /// identifier when not (a statement inserts its rows sorted by key, so rows sent in another order come
    /// back in that one). Either way each object gets its own row's key.
    @Test(arguments: [false, true])
    func eachUpsertedRowGetsItsOwnKeyWhateverOrderTheResultComesIn(_ sentInKeyOrder: Bool) throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let names = ["a-3", "a-1", "a-4", "a-2", "a-0"]
            let batch = (sentInKeyOrder ? names.sorted() : names).map { Self.author($0, "name of \($0)") }
            let result = try store.apply(ChangeSet(inserts: batch))
            let ids = batch.compactMap { result.permanentIDs[$0.id] }
            #expect(ids.count == batch.count)
            let rows = try store.fetch(ids: ids)
            let byID = Dictionary(rows.map { ($0.id, $0.attributes["id"]) }, uniquingKeysWith: { first, _ in first })
            for (change, id) in zip(batch, ids) {
                #expect(byID[id] == change.attributes["id"], "\(change.attributes["id"] ?? nil)")
            }
        }
    }

    @Test func duplicatesInOneBatchShareARowAndTheLastValuesWin() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let batch = [Self.author("x", "x1"), Self.author("y", "y1"), Self.author("x", "x2")]
            let result = try store.apply(ChangeSet(inserts: batch))
            #expect(result.permanentIDs[batch[0].id] == result.permanentIDs[batch[2].id])
            #expect(result.permanentIDs[batch[0].id] != result.permanentIDs[batch[1].id])
            let rows = try store.fetch(
                FetchRequest(entityName: "Author", sortDescriptors: [CVSortDescriptor(key: "id")]))
            #expect(rows.map { $0.attributes["name"] } == [.string("x2"), .string("y1")])
            // The first occurrence keeps its position: "x" was inserted first.
            #expect(rows[0].id.primaryKey ?? 0 < rows[1].id.primaryKey ?? 0)
        }
    }

    @Test func canonicallyEquivalentButDistinctIdentifiersGetTwoRows() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            // Swift's == says these are equal; PostgreSQL's text (and its UNIQUE constraint) does not.
            let batch = [Self.author("\u{E9}", "precomposed"), Self.author("e\u{301}", "decomposed")]
            let result = try store.apply(ChangeSet(inserts: batch))
            let first = try #require(result.permanentIDs[batch[0].id])
            let second = try #require(result.permanentIDs[batch[1].id])
            #expect(first != second)
            let rows = try store.fetch(FetchRequest(entityName: "Author"))
            #expect(rows.count == 2)
            let names = Dictionary(
                uniqueKeysWithValues: rows.map { ($0.id, $0.attributes["name"]) })
            #expect(names[first] == .string("precomposed"))
            #expect(names[second] == .string("decomposed"))
        }
    }

    @Test func saveAllKeepsCanonicallyEquivalentIdentifiersApartInTheContext() throws {
        try TestDatabase.withExampleStore { store, _, _ in try Self.saveEquivalentIdentifiers(store) }
    }

    @Test func memoryStoreKeepsCanonicallyEquivalentIdentifiersApart() throws {
        try Self.saveEquivalentIdentifiers(MemoryStore(model: try ExampleModel.make()))
    }

    /// Saves authors "\u{E9}" and "e\u{301}" (equal to Swift's ==, distinct bytes) and expects two rows.
    static func saveEquivalentIdentifiers(_ store: any Store) throws {
        let context = ManagedObjectContext(store: store)
        let authors = [Author(id: "\u{E9}", name: "precomposed"), Author(id: "e\u{301}", name: "decomposed")]
        try authors.saveAll(context)
        #expect(try store.fetch(FetchRequest(entityName: "Author")).count == 2)
        // A second batch in the same context finds each registered object, not the other one.
        let renamed = [Author(id: "e\u{301}", name: "d2"), Author(id: "\u{E9}", name: "p2")]
        let objects = try renamed.toObjects(context)
        #expect(objects.count == 2 && objects[0] !== objects[1])
        try context.save()
        let fetched: [Author] = try Author.query(ManagedObjectContext(store: store), predicate: nil)
        let byBytes = Dictionary(uniqueKeysWithValues: fetched.map { (Array($0.id.utf8), $0.name) })
        #expect(byBytes == [Array("\u{E9}".utf8): "p2", Array("e\u{301}".utf8): "d2"])
    }

    @Test func aBatchUpsertLeavesColumnsARowDidNotSet() throws {
        try TestDatabase.withSchema { url, schema in
            let model = try ManagedObjectModel {
                Entity("Item") {
                    Attribute("id", .string, unique: true)
                    Attribute("name", .string)
                    Attribute("note", .string, optional: true)
                    Attribute("size", .int32, defaultValue: .int32(5))
                }
            }
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
            try TestDatabase.execute(url, SchemaPrinter(model: model, schema: schema).ddl)
            let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            func item(_ id: String, _ attributes: AttributeValues) -> ObjectChange {
                ObjectChange(
                    id: .temporary("Item"), attributes: attributes.merging(["id": .string(id)]),
                    upsertKey: "id")
            }
            _ = try store.apply(
                ChangeSet(inserts: [item("a", ["name": .string("a1"), "note": .string("keep"), "size": .int32(9)])]))
            // "b" sets note and size; "a" does not, so its stored note and size must survive.
            _ = try store.apply(
                ChangeSet(inserts: [
                    item("a", ["name": .string("a2")]),
                    item("b", ["name": .string("b1"), "note": .string("n"), "size": .int32(1)]),
                ]))
            let rows = try store.fetch(FetchRequest(entityName: "Item", sortDescriptors: [CVSortDescriptor(key: "id")]))
            #expect(rows.map { $0.attributes["name"] } == [.string("a2"), .string("b1")])
            #expect(rows.map { $0.attributes["note"] } == [.string("keep"), .string("n")])
            #expect(rows.map { $0.attributes["size"] } == [.int32(9), .int32(1)])
        }
    }

    @Test func concurrentUpsertsFromManyThreadsLeaveOneRowPerIdentifier() throws {
        try TestDatabase.withExampleStore(poolSize: 4) { store, _, _ in
            let errors = ErrorBox()
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                do {
                    for round in 0..<5 {
                        let uuid = UUID(uuidString: "00000000-0000-0000-0000-00000000000\(round)") ?? UUID()
                        _ = try store.apply(
                            ChangeSet(inserts: [
                                ObjectChange(
                                    id: .temporary("Category"),
                                    attributes: ["id": .uuid(uuid), "name": .string("w\(worker)")], upsertKey: "id")
                            ]))
                    }
                } catch {
                    errors.append(error)
                }
            }
            #expect(errors.all.isEmpty, "\(errors.all)")
            let count = try store.fetch(FetchRequest(entityName: "Category")).count
            #expect(count == 5)
        }
    }
}

/// Collects values (errors, statements) from concurrent workers or event handlers.
final class LockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    func append(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }
    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }
}

/// Collects errors from concurrent workers.
typealias ErrorBox = LockedList<any Error>
