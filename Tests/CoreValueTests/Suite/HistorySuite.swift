@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Makes a fresh, empty store for the example model that records history; `author` is the store's own.
typealias HistoryStoreFactory = @Sendable (_ author: String?) throws -> any HistoryStore

/// One history behaviour check, run against `MemoryStore` and `PostgresStore` alike.
struct HistoryCase: Sendable, CustomTestStringConvertible {
    let name: String
    let run: @Sendable (HistoryStoreFactory, APIMode) async throws -> Void

    init(_ name: String, _ run: @escaping @Sendable (HistoryStoreFactory, APIMode) async throws -> Void) {
        self.name = name
        self.run = run
    }

    var testDescription: String { name }
}

/// Whether `error` is a `CVManagedStructError` with `code`.
func hasCode(_ error: any Error, _ code: CVManagedStructError.Code) -> Bool {
    (error as? CVManagedStructError)?.code == code
}

/// Reads every transaction after `token`, `limit` at a time, through the chosen API.
func readHistory(_ store: any HistoryStore, after token: HistoryToken?, limit: Int = 1_000, via api: APIMode)
    async throws -> [HistoryTransaction]
{
    var all: [HistoryTransaction] = []
    var token = token
    while true {
        let page =
            switch api {
            case .sync: try { try store.history(after: token, limit: limit) }()
            case .async: try await store.history(after: token, limit: limit)
            }
        all += page
        guard let last = page.last, page.count == limit else { return all }
        token = last.token
    }
}

/// Persistent history on both stores: what is recorded, reading in pages from tokens, pruning, bad tokens.
enum HistorySuite {
    static let cases: [HistoryCase] = [
        HistoryCase("records inserts, updates and deletes with names, authors and tombstones") { make, api in
            let store = try make("service-a")
            let context = ManagedObjectContext(store: store)
            context.transactionName = "hire"
            var eve = Fixtures.employee("Eve")
            try await eve.save(context, via: api)
            let product = Product(id: 7, name: "Lamp", price: 12)
            try await product.save(context, via: api)
            context.transactionAuthor = "admin"
            context.transactionName = "raise"
            eve.age = 31
            try await eve.save(context, via: api)
            context.transactionName = nil
            try await product.delete(context, via: api)
            try await context.save(via: api)

            let history = try await readHistory(store, after: nil, via: api)
            #expect(history.count == 4)
            guard history.count == 4, let eveID = eve.objectID else { return }
            #expect(history[0].changes == [HistoryChange(kind: .insert, objectID: eveID, version: 1)])
            #expect(history[0].author == "service-a" && history[0].name == "hire")
            #expect(history[1].changes.map(\.kind) == [.update])  // a unique struct's upsert
            #expect(history[1].changes.first?.updatedProperties == ["id", "name", "price"])
            #expect(
                history[2].changes == [
                    HistoryChange(kind: .update, objectID: eveID, updatedProperties: ["age"], version: 2)
                ])
            #expect(history[1].changes.first?.version == 1)
            #expect(history[3].changes.first?.version == nil)
            #expect(history[2].author == "admin" && history[2].name == "raise")
            #expect(history[3].changes.map(\.kind) == [.delete])
            #expect(history[3].changes.first?.tombstone == ["id": .int32(7)])
            #expect(history[3].name == nil)
            let numbers = history.map(\.transactionNumber)
            #expect(numbers == numbers.sorted() && Set(numbers).count == 4)
            #expect(zip(history, history.dropFirst()).allSatisfy { $0.token < $1.token })
        },
        HistoryCase("pages through from tokens, each transaction once, and starts from now") { make, api in
            let store = try make(nil)
            for index in 0..<7 {
                try await saveEmployee("E\(index)", in: store, api)
            }
            let now = try await currentToken(store, api)
            let paged = try await readHistory(store, after: nil, limit: 2, via: api)
            #expect(paged.count == 7)
            #expect(Set(paged.flatMap(\.changes).map(\.objectID)).count == 7)
            guard let last = paged.last else { return }
            #expect(try await readHistory(store, after: last.token, via: api).isEmpty)
            #expect(try await readHistory(store, after: now, via: api).isEmpty)
            try await saveEmployee("Late", in: store, api)
            let after = try await readHistory(store, after: now, via: api)
            #expect(after.count == 1)
            #expect(
                try await readHistory(store, after: last.token, via: api).map(\.transactionNumber)
                    == after.map(\.transactionNumber))
            // A token survives encoding, as a reader that keeps it in a file does.
            let decoded = try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(paged[3].token))
            #expect(decoded == paged[3].token)
            #expect(try await readHistory(store, after: decoded, via: api).count == 4)
        },
        HistoryCase("a bulk saveAll is one transaction listing every object with its version") { make, api in
            let store = try make(nil)
            let start = try await currentToken(store, api)
            var products = (1...300).map { Product(id: Int32($0), name: "P\($0)", price: 1) }
            try await products.saveAll(ManagedObjectContext(store: store), via: api)
            products = (1...300).map { Product(id: Int32($0), name: "Q\($0)", price: 2) }
            try await products.saveAll(ManagedObjectContext(store: store), via: api)
            let history = try await readHistory(store, after: start, via: api)
            #expect(history.count == 2)
            let stored: [Product] = try await Product.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            let context = ManagedObjectContext(store: store)
            let ids = Set(try await context.fetch(FetchRequest(entityName: "Product")).map(\.objectID))
            #expect(stored.count == 300)
            for (transaction, version) in zip(history, [Int64(1), 2]) {
                #expect(Set(transaction.changes.map(\.objectID)) == ids)
                #expect(transaction.changes.allSatisfy { $0.kind == .update && $0.version == version })
                #expect(transaction.changes.allSatisfy { $0.updatedProperties == ["id", "name", "price"] })
            }
        },
        HistoryCase("a save that fails is never recorded") { make, api in
            let store = try make(nil)
            let context = ManagedObjectContext(store: store)
            var eve = Fixtures.employee("Eve")
            try await eve.save(context, via: api)
            var stale = eve
            eve.age = 40
            try await eve.save(ManagedObjectContext(store: store), via: api)
            stale.age = 41
            await #expect { try await stale.save(context, via: api) } throws: { hasCode($0, .conflict) }
            let history = try await readHistory(store, after: nil, via: api)
            #expect(history.map { $0.changes.map(\.kind) } == [[.insert], [.update]])
        },
        HistoryCase("batch requests are recorded with the rows and attributes they wrote, and by whom") { make, api in
            let store = try make(nil)
            let context = ManagedObjectContext(store: store)
            for index in 0..<3 {
                var employee = Fixtures.employee("E\(index)", age: Int16(20 + index))
                try await employee.save(context, via: api)
            }
            let start = try await currentToken(store, api)
            context.transactionAuthor = "janitor"
            context.transactionName = "promote"
            let updated = try await context.batchUpdate(
                BatchUpdateRequest(
                    entityName: "Employee", predicate: .key("age") >= 21, values: ["job": .string("Lead")]))
            context.transactionName = "purge"
            let deleted = try await context.batchDelete(
                BatchDeleteRequest(entityName: "Employee", predicate: .key("age") < 21))
            #expect(updated.count == 2 && deleted.count == 1)
            let history = try await readHistory(store, after: start, via: api)
            #expect(history.count == 2)
            guard history.count == 2 else { return }
            #expect(history[0].changes.count == 2)
            #expect(history[0].changes.allSatisfy { $0.kind == .update && $0.updatedProperties == ["job"] })
            #expect(history[1].changes.map(\.kind) == [.delete])
            #expect(history.map(\.author) == ["janitor", "janitor"])
            #expect(history.map(\.name) == ["promote", "purge"])
        },
        HistoryCase("deleting history expires older tokens and keeps newer ones reading") { make, api in
            let store = try make(nil)
            for index in 0..<4 { try await saveEmployee("E\(index)", in: store, api) }
            let history = try await readHistory(store, after: nil, via: api)
            guard history.count == 4 else { Issue.record("expected 4 transactions"); return }
            let firstToken = history[0].token
            let pruneToken = try await currentToken(store, api)
            try await saveEmployee("E4", in: store, api)
            #expect(try await store.deleteHistory(before: pruneToken) == 4)
            await #expect {
                _ = try await readHistory(store, after: firstToken, via: api)
            } throws: { hasCode($0, .historyExpired) }
            #expect(try await readHistory(store, after: pruneToken, via: api).count == 1)
            #expect(try await readHistory(store, after: nil, via: api).count == 1)
            // An older token deletes nothing more.
            #expect(try await store.deleteHistory(before: firstToken) == 0)
            // By date: everything recorded before now.
            #expect(try await store.deleteHistory(olderThan: Date().addingTimeInterval(60)) == 1)
            #expect(try await readHistory(store, after: nil, via: api).isEmpty)
            await #expect {
                _ = try await readHistory(store, after: pruneToken, via: api)
            } throws: { hasCode($0, .historyExpired) }
        },
        HistoryCase("bad tokens and limits are refused with typed errors") { make, api in
            let store = try make(nil)
            let other = try make(nil)
            let foreign = try await currentToken(other, api)
            await #expect {
                _ = try await readHistory(store, after: foreign, via: api)
            } throws: { hasCode($0, .historyUnavailable) }
            await #expect { _ = try await store.history(after: nil, limit: 0) } throws: { hasCode($0, .invalidObject) }
            await #expect { _ = try await store.deleteHistory(before: foreign) } throws: {
                hasCode($0, .historyUnavailable)
            }
        },
    ]

    private static func saveEmployee(_ name: String, in store: any Store, _ api: APIMode) async throws {
        var employee = Fixtures.employee(name)
        try await employee.save(ManagedObjectContext(store: store), via: api)
    }

    private static func currentToken(_ store: any HistoryStore, _ api: APIMode) async throws -> HistoryToken {
        switch api {
        case .sync: try { try store.currentHistoryToken() }()
        case .async: try await store.currentHistoryToken()
        }
    }
}
