@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// The original CoreValue's test model: articles in categories and categories in articles, a many-to-many
/// ordered on both sides, each side's order kept independently. Run against MemoryStore here and against
/// PostgresStore (a fresh schema from the model's DDL, and a second store reading back) in
/// CoreValuePostgresTests.
enum BothOrderedSuite {
    struct SeedArticle: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Article"
        static let IdentifierName = "id"
        func IdentifierValue() -> IdentifierType { id }
        var id: Int64
        var title: String

        static func fromObject(_ o: ManagedObject) throws -> SeedArticle {
            try curry(self.init) <^> o <| "id" <^> o <| "title"
        }
    }

    struct SeedCategory: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Category"
        static let IdentifierName = "name"
        func IdentifierValue() -> IdentifierType { name }
        var name: String
        var articles: [SeedArticle]

        static func fromObject(_ o: ManagedObject) throws -> SeedCategory {
            try curry(self.init) <^> o <| "name" <^> o <|| "articles"
        }
    }

    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Article") {
                Attribute("id", .int64, unique: true)
                Attribute("title", .string)
                Relationship("categories", to: "Category", .orderedToMany, inverse: "articles")
            }
            Entity("Category") {
                Attribute("name", .string, unique: true)
                Relationship("articles", to: "Article", .orderedToMany, inverse: "categories")
            }
        }
    }

    /// The names of an object's ordered members under `key`.
    static func order(_ object: ManagedObject, _ key: String, _ attribute: String) throws -> [String] {
        try object.objects(forKey: key).map { "\(try $0.value(forKey: attribute))" }
    }

    static func read(_ store: any Store) throws -> (categories: [String: [Int64]], articles: [Int64: [String]]) {
        let context = ManagedObjectContext(store: store)
        var categories: [String: [Int64]] = [:]
        for object in try context.fetch(FetchRequest(entityName: "Category")) {
            let name = try object.value(forKey: "name", as: String.self) ?? ""
            categories[name] = try object.objects(forKey: "articles").map {
                try $0.value(forKey: "id", as: Int64.self) ?? -1
            }
        }
        var articles: [Int64: [String]] = [:]
        for object in try context.fetch(FetchRequest(entityName: "Article")) {
            let id = try object.value(forKey: "id", as: Int64.self) ?? -1
            articles[id] = try object.objects(forKey: "categories").map {
                try $0.value(forKey: "name", as: String.self) ?? ""
            }
        }
        return (categories, articles)
    }

    /// Saves, reorders each side, and reads back through `readers` (fresh contexts on each store given).
    static func run(_ store: any Store, readers: [any Store]) throws {
        let a1 = SeedArticle(id: 1, title: "One")
        let a2 = SeedArticle(id: 2, title: "Two")
        let a3 = SeedArticle(id: 3, title: "Three")
        try [
            SeedCategory(name: "news", articles: [a1, a2, a3]),
            SeedCategory(name: "tech", articles: [a3, a1]),
        ].saveAll(ManagedObjectContext(store: store))
        for reader in readers {
            let (categories, articles) = try read(reader)
            #expect(categories == ["news": [1, 2, 3], "tech": [3, 1]])
            // Each article lists its categories in the order it was added to them.
            #expect(articles == [1: ["news", "tech"], 2: ["news"], 3: ["news", "tech"]])
        }

        // Reorder one category's articles: no article's categories move.
        try SeedCategory(name: "news", articles: [a3, a2, a1]).save(ManagedObjectContext(store: store))
        // Reorder one article's categories, from the article's side.
        let context = ManagedObjectContext(store: store)
        let first = try #require(
            try context.fetch(FetchRequest(entityName: "Article", predicate: .key("id") == 1)).first)
        let its = try first.objects(forKey: "categories")
        try first.setObjects(its.reversed(), forKey: "categories")
        try context.save()
        for reader in readers {
            let (categories, articles) = try read(reader)
            #expect(categories == ["news": [3, 2, 1], "tech": [3, 1]])
            #expect(articles == [1: ["tech", "news"], 2: ["news"], 3: ["news", "tech"]])
        }

        // Removing an article from a category removes the category from the article, and nothing else.
        try SeedCategory(name: "tech", articles: [a3]).save(ManagedObjectContext(store: store))
        for reader in readers {
            let (categories, articles) = try read(reader)
            #expect(categories == ["news": [3, 2, 1], "tech": [3]])
            #expect(articles == [1: ["news"], 2: ["news"], 3: ["news", "tech"]])
        }

        // Two contexts that read "tech" before either saves: unique structs are last-writer-wins, and the
        // two sides still agree afterwards (the second write replaces the list, and its article sides too).
        let early = ManagedObjectContext(store: store)
        let late = ManagedObjectContext(store: store)
        _ = try SeedCategory.query(early, predicate: .key("name") == "tech") as [SeedCategory]
        _ = try SeedCategory.query(late, predicate: .key("name") == "tech") as [SeedCategory]
        try SeedCategory(name: "tech", articles: [a3, a1]).save(early)
        try SeedCategory(name: "tech", articles: [a2]).save(late)
        for reader in readers {
            let (categories, articles) = try read(reader)
            #expect(categories == ["news": [3, 2, 1], "tech": [2]])
            #expect(articles == [1: ["news"], 2: ["news", "tech"], 3: ["news"]])
        }
    }
}
