@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Unique structs: one row per identifier, shared nested authors, batched lookups.
enum UniqueSuite {
    static let cases: [SuiteCase] = [
        SuiteCase("a bulk saveAll of new unique structs saves each identifier once, the last one's values winning") {
            make, api in
            let store = try make()
            // More than one part of a streamed save, in descending identifier order, identifier 7 twice.
            var products = (1...4_500).reversed().map { Product(id: Int32($0), name: "p\($0)", price: Decimal($0)) }
            products.append(Product(id: 7, name: "last", price: 77))
            let context = ManagedObjectContext(store: store)
            try await products.saveAll(context, via: api)
            #expect(!context.hasChanges)
            #expect(context.registeredObjects(entityName: "Product").allSatisfy { !$0.objectID.isTemporary })
            let read: [Product] = try await Product.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "id")], via: api)
            #expect(read.map(\.id) == Array(1...4_500))
            #expect(read[6] == Product(id: 7, name: "last", price: 77))
            #expect(read[4_499] == Product(id: 4_500, name: "p4500", price: 4_500))
        },
        SuiteCase("saving the same identifier twice updates one row") { make, api in
            let store = try make()
            try await Author(id: "a1", name: "Ann").save(ManagedObjectContext(store: store), via: api)
            try await Author(id: "a1", name: "Anne").save(ManagedObjectContext(store: store), via: api)
            let read: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read == [Author(id: "a1", name: "Anne")])
        },
        SuiteCase("changing the identifier creates a new row and keeps the old one") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var author = Author(id: "a1", name: "Ann")
            try await author.save(context, via: api)
            author.id = "a2"
            try await author.save(context, via: api)
            let read: [Author] = try await Author.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "id")], via: api)
            #expect(read.map(\.id) == ["a1", "a2"])
        },
        SuiteCase("articles share one nested author row") { make, api in
            let store = try make()
            let author = Author(id: "a1", name: "Ann")
            let articles = (1...4).map { Article(id: $0, title: "T\($0)", text: "", author: author, categories: []) }
            try await articles.saveAll(ManagedObjectContext(store: store), via: api)
            try await articles[0].save(ManagedObjectContext(store: store), via: api)
            #expect(try Fixtures.count(store, "Author") == 1)
            let read: [Article] = try await Article.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.count == 4)
            #expect(read.allSatisfy { $0.author == author })
        },
        SuiteCase("unique lookups are per entity") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            try await Product(id: 1, name: "Pen", price: 2).save(context, via: api)
            try await Article(id: 1, title: "One", text: "", author: nil, categories: []).save(context, via: api)
            #expect(try Fixtures.count(store, "Product") == 1)
            #expect(try Fixtures.count(store, "Article") == 1)
            let products: [Product] = try await Product.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(products.map(\.name) == ["Pen"])
        },
        SuiteCase("toObjects makes one batched lookup and one object per element in order") { make, api in
            let store = CountingStore(try make())
            try await (1...5).map { Product(id: Int32($0), name: "Old \($0)", price: 1) }
                .saveAll(ManagedObjectContext(store: store), via: api)
            store.reset()
            let context = ManagedObjectContext(store: store)
            var input = (1...10).map { Product(id: Int32($0), name: "New \($0)", price: Decimal($0)) }
            input.append(Product(id: 3, name: "Last 3", price: 33))
            let objects = try await input.toObjects(context, via: api)
            #expect(store.count("fetchValues") == 1)
            #expect(store.count("fetch") == 0)
            #expect(store.count("fetchIDs") == 0)
            #expect(objects.count == input.count)
            #expect(objects[2] === objects[10])
            #expect(try objects.map { try $0.value(forKey: "id", as: Int32.self) } == input.map(\.id))
            #expect(try objects[2].value(forKey: "name") == .string("Last 3"))
            try await context.save(via: api)
            #expect(store.count("apply") == 1)
            #expect(try Fixtures.count(store, "Product") == 10)
            // Registered identifiers need no store call at all.
            store.reset()
            try await input.toObjects(context, via: api)
            #expect(store.count("fetchValues") == 0)
        },
        SuiteCase("toObjects batches nested unique structs per entity") { make, api in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            let categories = (1...3).map { Fixtures.category("C\($0)") }
            let articles = (1...30).map {
                Article(
                    id: $0, title: "T", text: "", author: Author(id: "a\($0 % 4)", name: "A"),
                    categories: [categories[Int($0) % 3]])
            }
            try await articles.saveAll(context, via: api)
            #expect(store.count("fetchValues") == 3)
            #expect(try Fixtures.count(store, "Author") == 4)
            #expect(try Fixtures.count(store, "Category") == 3)
        },
        SuiteCase("an insert of an existing identifier from a stale context upserts") { make, api in
            let store = try make()
            let early = ManagedObjectContext(store: store)
            let object = try await Author(id: "a1", name: "Early").toObject(early, via: api)
            try await Author(id: "a1", name: "Other").save(ManagedObjectContext(store: store), via: api)
            try await early.save(via: api)
            #expect(try Fixtures.count(store, "Author") == 1)
            let read: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.map(\.name) == ["Early"])
            #expect(!object.objectID.isTemporary)
        },
        SuiteCase("unique delete removes the row, and a missing one throws") { make, api in
            let store = try make()
            let author = Author(id: "a1", name: "Ann")
            try await author.save(ManagedObjectContext(store: store), via: api)
            try await author.delete(ManagedObjectContext(store: store), via: api)
            #expect(try Fixtures.count(store, "Author") == 0)
            await #expect(throws: CVManagedStructError.self) {
                try await author.delete(ManagedObjectContext(store: store), via: api)
            }
        },
        SuiteCase("identifierPredicate is typed") { _, _ in
            let predicate = try Product(id: 7, name: "", price: 0).identifierPredicate()
            #expect(predicate == .comparison(key: "id", .equal, .int32(7)))
            #expect("x".predicate("id") == .comparison(key: "id", .equal, .string("x")))
        },
    ]
}
