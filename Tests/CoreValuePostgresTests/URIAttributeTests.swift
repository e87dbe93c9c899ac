@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// The `uri` attribute type (Core Data's URI), added by CONTRIBUTING.md's recipe for a new column type: a
/// struct's `URL` boxes into it, both stores keep it, predicates and sorting compare it as text, and
/// PostgreSQL stores it in a `text` column.
@Suite struct URIAttributeTests {
    struct Bookmark: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Bookmark"
        static let IdentifierName = "url"
        var url: URL
        var mirror: URL?
        var title: String
        func IdentifierValue() -> IdentifierType { url }
        static func fromObject(_ o: ManagedObject) throws -> Bookmark {
            try curry(self.init) <^> o <| "url" <^> o <|? "mirror" <^> o <| "title"
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity(
                "Bookmark",
                attributes: [
                    Attribute("url", .uri, unique: true), Attribute("mirror", .uri, optional: true),
                    Attribute("title", .string),
                ])
        ])
    }

    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    static func bookmarks() throws -> [Bookmark] {
        [
            Bookmark(url: try url("https://b.example/x?q=1#f"), mirror: nil, title: "b"),
            Bookmark(url: try url("https://a.example/%C3%A4"), mirror: try url("http://m.example/"), title: "a"),
            Bookmark(url: try url("file:///tmp/c"), mirror: nil, title: "c"),
            // Byte order puts "Z" before "a"; a locale's order would not.
            Bookmark(url: try url("https://Z.example/"), mirror: nil, title: "z"),
        ]
    }

    /// Saves, overwrites by identifier, queries by equality and order: the same on either store.
    static func exercise(_ store: any Store) throws {
        var bookmarks = try bookmarks()
        try bookmarks.saveAll(ManagedObjectContext(store: store))
        bookmarks[0].title = "b2"
        try bookmarks[0].save(ManagedObjectContext(store: store))
        let context = ManagedObjectContext(store: store)
        let all: [Bookmark] = try Bookmark.query(
            context, predicate: nil, sortDescriptors: [CVPredicateKey.key("url").ascending])
        #expect(
            all.map(\.url.absoluteString) == [
                "file:///tmp/c", "https://Z.example/", "https://a.example/%C3%A4", "https://b.example/x?q=1#f",
            ])
        #expect(all.first { $0.title == "b2" }?.url == bookmarks[0].url)
        let found: [Bookmark] = try Bookmark.query(context, predicate: .key("url") == bookmarks[1].url)
        #expect(found == [bookmarks[1]])
        let mirrored: [Bookmark] = try Bookmark.query(context, predicate: CVPredicateKey.key("mirror").isNotNull)
        #expect(mirrored.map(\.title) == ["a"])
        // A string is not a URL: no silent conversion either way.
        #expect(throws: CVManagedStructError.self) {
            let _: [Bookmark] = try Bookmark.query(context, predicate: .key("url") == "file:///tmp/c")
        }
    }

    @Test func bothStoresKeepURLs() throws {
        try Self.exercise(MemoryStore(model: try Self.model()))
        guard TestDatabase.isAvailable(#function) else { return }
        try TestSchema.with(model: try Self.model()) { schema in
            try Self.exercise(schema.store)
            // Stored as text, its absolute string.
            let table = SQLIdentifier("Bookmark", schema: schema.name).quoted
            let connection = try Connection(schema.url)
            defer { connection.close() }
            let type = try connection.query(
                "SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'url'",
                [try PostgresValue(schema.name)]
            ).decode(String.self, row: 0, column: 0)
            #expect(type == "text")
            // Text another writer stored that is no URL is a typed decoding error, never a guess.
            try connection.execute("UPDATE \(table) SET mirror = 'http://[bad' WHERE title = 'c'")
            #expect {
                let _: [Bookmark] = try Bookmark.query(ManagedObjectContext(store: schema.store), predicate: nil)
            } throws: { error in
                ((error as? PostgresStoreError)?.underlying as? LibPQError)?.code == .decoding
            }
        }
    }

    /// A URL relative to a base is stored as its absolute string and read back as that URL, on either store.
    @Test func aRelativeURLComesBackAbsoluteFromBothStores() throws {
        let relative = try #require(URL(string: "page?x=1", relativeTo: try Self.url("https://base.example/dir/")))
        let absolute = try Self.url("https://base.example/dir/page?x=1")
        func exercise(_ store: any Store) throws {
            let bookmark = Bookmark(url: relative, mirror: relative, title: "relative")
            try bookmark.save(ManagedObjectContext(store: store))
            let read: [Bookmark] = try Bookmark.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.map(\.url) == [absolute])
            #expect(read.first?.mirror == absolute)
            #expect(read.first?.url.baseURL == nil)
        }
        try TestDatabase.onBothStores(model: try Self.model(), #function, exercise)
    }

    @Test func theSchemaPrinterWritesText() throws {
        let ddl = SchemaPrinter(model: try Self.model()).ddl
        // Byte order, as both stores compare URLs (and as text columns are declared).
        #expect(ddl.contains("\"url\" text COLLATE \"C\" NOT NULL"))
        #expect(ddl.contains("\"mirror\" text COLLATE \"C\""))
    }
}
