@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// The "No Action" delete rule (Core Data's, issue 31): deleting the source leaves its destinations alone in
/// the context (not loaded, not unlinked), and the store still keeps no dangling link. The cases take a
/// factory of stores for ``model``.
enum NoActionSuite {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel {
                Entity("Shelf") {
                    Attribute("name", .string)
                    Relationship("books", to: "Book", .orderedToMany, inverse: "shelf", deleteRule: .noAction)
                    Relationship("label", to: "Label", inverse: "shelf", deleteRule: .noAction)
                }
                Entity("Book") {
                    Attribute("title", .string)
                    Relationship("shelf", to: "Shelf", inverse: "books")
                }
                Entity("Label") {
                    Attribute("text", .string)
                    Relationship("shelf", to: "Shelf", inverse: "label")
                }
            }
        } catch { preconditionFailure("the no-action test model is invalid: \(error)") }
    }()

    static func saveShelf(_ store: any Store) throws {
        let context = ManagedObjectContext(store: store)
        let shelf = try context.insert(entityName: "Shelf")
        try shelf.setValue("S", forKey: "name")
        let books = try (1...2).map { index -> ManagedObject in
            let book = try context.insert(entityName: "Book")
            try book.setValue("B\(index)", forKey: "title")
            return book
        }
        try shelf.setObjects(books, forKey: "books")
        let label = try context.insert(entityName: "Label")
        try label.setValue("L", forKey: "text")
        try shelf.setObject(label, forKey: "label")
        try context.save()
    }

    /// Deletes the one shelf through a counting store; returns the store calls the delete made.
    static func deleteShelf(_ store: any Store) throws -> (fetches: Int, byID: Int) {
        let counting = CountingStore(store)
        let context = ManagedObjectContext(store: counting)
        let shelf = try #require(try context.fetch(FetchRequest(entityName: "Shelf")).first)
        counting.reset()
        try context.delete(shelf)
        let calls = (counting.count("fetch") + counting.count("fetchValues"), counting.count("fetchIDs"))
        try context.save()
        return calls
    }

    static func check(_ store: any Store) throws {
        try saveShelf(store)
        let calls = try deleteShelf(store)
        // Nothing loaded: the destinations are left alone.
        #expect(calls.fetches == 0 && calls.byID == 0)
        // Nothing deleted with the shelf, and nothing links to it any more.
        let context = ManagedObjectContext(store: store)
        let books = try context.fetch(FetchRequest(entityName: "Book", sortDescriptors: [.init(key: "title")]))
        #expect(books.count == 2)
        for book in books { #expect(try book.object(forKey: "shelf") == nil) }
        let label = try #require(try context.fetch(FetchRequest(entityName: "Label")).first)
        #expect(try label.object(forKey: "shelf") == nil)
        #expect(try context.fetch(FetchRequest(entityName: "Shelf")).isEmpty)
    }

    /// Objects already in the context keep holding the deleted object, which reads as absent, and saving
    /// them afterwards writes no link to it.
    static func checkRegistered(_ store: any Store) throws {
        try saveShelf(store)
        let context = ManagedObjectContext(store: store)
        let books = try context.fetch(FetchRequest(entityName: "Book", sortDescriptors: [.init(key: "title")]))
        let shelf = try #require(try books.first?.object(forKey: "shelf"))
        try context.delete(shelf)
        #expect(try books[0].object(forKey: "shelf") == nil)
        try books[0].setValue("B1 again", forKey: "title")
        try context.save()
        let fresh = ManagedObjectContext(store: store)
        let stored = try fresh.fetch(FetchRequest(entityName: "Book", sortDescriptors: [.init(key: "title")]))
        #expect(stored.map { try? $0.value(forKey: "title", as: String.self) } == ["B1 again", "B2"])
        for book in stored { #expect(try book.object(forKey: "shelf") == nil) }
    }
}
