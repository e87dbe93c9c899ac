@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// The links of an owner that the same save inserted go into the join table without `ON CONFLICT` (no join
/// row can name a row that did not exist); an owner whose row was stored keeps the upsert of its links.
@Suite struct NewOwnerLinkTests {
    static func category(_ number: UInt8) -> Category {
        Category(id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, number)), name: "c\(number)")
    }

    static func article(_ categories: [UInt8]) -> Article {
        Article(id: 1, title: "t", text: "x", author: nil, categories: categories.map(category))
    }

    /// The article's stored category names, in order.
    static func storedCategories(_ store: PostgresStore) throws -> [String] {
        let articles: [Article] = try Article.query(
            ManagedObjectContext(store: store), predicate: .key("id") == Int64(1), sortDescriptors: [])
        return articles.first?.categories.map(\.name) ?? []
    }

    @Test func aNewOwnersLinksAreInsertedPlainlyAndAStoredOnesAreUpserted() throws {
        let log = PlainBulkInsertTests.SQLLog()
        try TestDatabase.withExampleStore(configure: { configuration in
            configuration.onEvent = { event in
                if event.kind == .statement, let sql = event.sql { log.append(sql) }
            }
        }) { store, _, _ in
            func linkStatements(from start: Int) -> [String] {
                log.all.dropFirst(start).filter { $0.hasPrefix("INSERT INTO") && $0.contains("categories") }
            }
            try Self.article([0, 1, 2]).save(ManagedObjectContext(store: store))
            let first = linkStatements(from: 0)
            #expect(first.count == 1 && first.allSatisfy { !$0.contains("ON CONFLICT") })
            #expect(try Self.storedCategories(store) == ["c0", "c1", "c2"])

            // The same identifier from a new context: the upsert finds the stored row (version 2), whose
            // links exist; they are moved, one dropped, one added.
            let start = log.all.count
            try Self.article([2, 0, 3]).save(ManagedObjectContext(store: store))
            let second = linkStatements(from: start)
            #expect(second.count == 1 && second.allSatisfy { $0.contains("ON CONFLICT") })
            #expect(try Self.storedCategories(store) == ["c2", "c0", "c3"])
        }
    }

    /// A row whose version was set below 1 by hand comes back from an upsert at version 1, as a new row
    /// does: its links are then inserted plainly, and the links still stored make that insert fail. The save
    /// is refused whole; no link is duplicated, dropped or moved. (Through the struct API a stored row is
    /// found first and updated; the store's own upsert of an owner with links is the way there.)
    @Test func anOwnerMisjudgedNewFailsItsSaveRatherThanDuplicatingLinks() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            try Self.article([0, 1, 2]).save(ManagedObjectContext(store: store))
            let table = SQLIdentifier("Article", schema: schema).quoted
            try TestDatabase.execute(url, "UPDATE \(table) SET \"_version\" = 0")
            let categories = try store.fetch(
                FetchRequest(entityName: "Category", sortDescriptors: [CVSortDescriptor(key: "name")]))
            let owner = ManagedObjectID.temporary("Article")
            let changes = ChangeSet(
                inserts: [
                    ObjectChange(
                        id: owner, attributes: ["id": .int64(1), "title": .string("t"), "text": .string("x")],
                        upsertKey: "id")
                ],
                relationships: [
                    RelationshipChange(owner: owner, relationship: "categories", members: categories.map(\.id))
                ])
            #expect {
                _ = try store.apply(changes)
            } throws: { error in
                (error as? PostgresStoreError)?.sqlState == .uniqueViolation
            }
            #expect(try Self.storedCategories(store) == ["c0", "c1", "c2"])
            let versions = try store.fetch(FetchRequest(entityName: "Article")).map(\.version)
            #expect(versions == [0])
        }
    }
}
