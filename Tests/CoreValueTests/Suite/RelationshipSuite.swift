@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Relationships: inverses on both sides, batched loading, to-one and unordered to-many round trips.
enum RelationshipSuite {
    /// Whether an error is a `CVManagedStructError.conflict`.
    static func isConflict(_ error: any Error) -> Bool {
        isStructError(error) { if case .conflict = $0 { true } else { false } }
    }

    /// The names of each company's employees, read with a fresh context, by company name.
    static func staff(_ store: any Store) throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        let context = ManagedObjectContext(store: store)
        for company in try context.fetch(FetchRequest(entityName: "Company")) {
            let name = try company.value(forKey: "name", as: String.self) ?? ""
            result[name] = try company.objects(forKey: "employees").map {
                try $0.value(forKey: "name", as: String.self) ?? ""
            }
        }
        return result
    }

    static let cases: [SuiteCase] = [
        SuiteCase("two contexts changing one owner's member list: the second save conflicts") { make, api in
            let store = try make()
            var company = Company(name: "C", employees: [Fixtures.employee("e0")])
            try await company.save(ManagedObjectContext(store: store), via: api)
            let id = try #require(company.objectID)
            let first = ManagedObjectContext(store: store)
            let second = ManagedObjectContext(store: store)
            let owner1 = try await first.existingObject(with: id, via: api)
            let owner2 = try await second.existingObject(with: id, via: api)
            let added = try await Fixtures.employee("e1").toObject(first, via: api)
            try owner1.setObjects([added] + (try owner1.objects(forKey: "employees")), forKey: "employees")
            try owner2.setObjects([], forKey: "employees")
            try await first.save(via: api)
            await #expect(performing: { try await second.save(via: api) }, throws: isConflict)
            #expect(try staff(store) == ["C": ["e1", "e0"]])
        },
        SuiteCase("moving several members at once leaves the old owner's other members in order") { make, api in
            let store = try make()
            var source = Company(name: "A", employees: (0..<5).map { Fixtures.employee("e\($0)") })
            var target = Company(name: "B", employees: [])
            let setup = ManagedObjectContext(store: store)
            try await source.save(setup, via: api)
            try await target.save(setup, via: api)
            let context = ManagedObjectContext(store: store)
            let a = try await context.existingObject(with: try #require(source.objectID), via: api)
            let b = try await context.existingObject(with: try #require(target.objectID), via: api)
            let members = try a.objects(forKey: "employees")
            try b.setObjects([members[3], members[1], members[0]], forKey: "employees")
            #expect(try a.objects(forKey: "employees") == [members[2], members[4]])
            #expect(try members[0].object(forKey: "company") === b)
            try await context.save(via: api)
            #expect(try staff(store) == ["A": ["e2", "e4"], "B": ["e3", "e1", "e0"]])
        },
        SuiteCase("moving a member while another context adds one to its old owner conflicts") { make, api in
            let store = try make()
            var company = Company(name: "C", employees: [Fixtures.employee("e0")])
            var other = Company(name: "D", employees: [])
            let setup = ManagedObjectContext(store: store)
            try await company.save(setup, via: api)
            try await other.save(setup, via: api)
            let mover = ManagedObjectContext(store: store)
            let adder = ManagedObjectContext(store: store)
            let c1 = try await mover.existingObject(with: try #require(company.objectID), via: api)
            let d1 = try await mover.existingObject(with: try #require(other.objectID), via: api)
            let c2 = try await adder.existingObject(with: try #require(company.objectID), via: api)
            try d1.setObjects(try c1.objects(forKey: "employees"), forKey: "employees")
            let e2 = try await Fixtures.employee("e2").toObject(adder, via: api)
            try c2.setObjects(try c2.objects(forKey: "employees") + [e2], forKey: "employees")
            try await mover.save(via: api)
            await #expect(performing: { try await adder.save(via: api) }, throws: isConflict)
            #expect(try staff(store) == ["C": [], "D": ["e0"]])
        },
        SuiteCase("inverse relationships are consistent in memory and after saving") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            let company = try await Company(
                name: "Acme", employees: [Fixtures.employee("Ann"), Fixtures.employee("Bob")]
            )
            .toObject(context, via: api)
            let ann = try #require(try company.objects(forKey: "employees").first)
            #expect(try ann.object(forKey: "company") === company)
            let rival = try context.insert(entityName: "Company")
            try rival.setValue("Rival", forKey: "name")
            try ann.setObject(rival, forKey: "company")
            #expect(try company.objects(forKey: "employees").count == 1)
            #expect(try rival.objects(forKey: "employees") == [ann])
            try await context.save(via: api)
            let fresh = ManagedObjectContext(store: store)
            let companies: [Company] = try await Company.query(
                fresh, predicate: nil, sortDescriptors: [.init(key: "name")], via: api)
            #expect(companies.map { $0.employees.map(\.name) } == [["Bob"], ["Ann"]])
            let employees = try await fresh.fetch(
                FetchRequest(entityName: "Employee", predicate: .key("name") == "Ann"), via: api)
            #expect(try employees.first?.object(forKey: "company")?.value(forKey: "name") == .string("Rival"))
        },
        SuiteCase("many-to-many inverses are kept on both sides") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            let news = Fixtures.category("News")
            let tech = Fixtures.category("Tech")
            try await [
                Article(id: 1, title: "A", text: "", author: nil, categories: [news, tech]),
                Article(id: 2, title: "B", text: "", author: nil, categories: [tech]),
            ].saveAll(context, via: api)
            let fresh = ManagedObjectContext(store: store)
            let techObject = try #require(
                try await fresh.fetch(FetchRequest(entityName: "Category", predicate: .key("name") == "Tech"), via: api)
                    .first)
            let titles = try techObject.objects(forKey: "articles").map { try $0.value(forKey: "title") }
            #expect(Set(titles) == [.string("A"), .string("B")])
            let read: [Article] = try await Article.query(
                fresh, predicate: nil, sortDescriptors: [.init(key: "id")], via: api)
            #expect(read.first?.categories.map(\.name) == ["News", "Tech"])
        },
        SuiteCase("related objects load in one batch for all fetched objects") { make, api in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            for index in 1...4 {
                try await Company(name: "C\(index)", employees: (1...3).map { Fixtures.employee("E\(index)-\($0)") })
                    .toObject(context, via: api)
            }
            try await context.save(via: api)
            store.reset()
            let companies: [Company] = try await Company.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(companies.count == 4)
            #expect(companies.allSatisfy { $0.employees.count == 3 })
            #expect(store.count("fetch") == 1)
            #expect(store.count("fetchIDs") == 1)
        },
        SuiteCase("a shop round-trips its owner and its set of products") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var owner = Fixtures.employee("Owner")
            try await owner.save(context, via: api)
            let products: Set<Product> = [
                Product(id: 1, name: "Pen", price: Decimal(string: "1.50") ?? 0),
                Product(id: 2, name: "Ink", price: 3),
            ]
            try await Shop(name: "Corner", owner: owner, products: products).toObject(context, via: api)
            try await Shop(name: "Kiosk", owner: nil, products: [Product(id: 1, name: "Pen", price: 2)]).toObject(
                context, via: api)
            try await context.save(via: api)
            let shops: [Shop] = try await Shop.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "name")], via: api)
            #expect(shops.map(\.name) == ["Corner", "Kiosk"])
            #expect(shops[0].owner == owner)
            #expect(shops[0].products.map(\.id).sorted() == [1, 2])
            let reader = ManagedObjectContext(store: store)  // objects need their context alive to load links
            let corner = try #require(
                try await reader.fetch(FetchRequest(entityName: "Shop", predicate: .key("name") == "Corner"), via: api)
                    .first)
            #expect(try corner.objectSet(forKey: "products").count == 2)
            #expect(shops[1].owner == nil)
            #expect(shops[1].products.map(\.price) == [2])
            #expect(try Fixtures.count(store, "Product") == 2)
            #expect(try Fixtures.count(store, "Employee") == 1)
        },
        SuiteCase("deleting an object unlinks it from related objects (nullify)") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var company = Company(name: "Acme", employees: (1...3).map { Fixtures.employee("E\($0)") })
            try await company.save(context, via: api)
            let fresh = ManagedObjectContext(store: store)
            let second = try #require(
                try await fresh.fetch(FetchRequest(entityName: "Employee", predicate: .key("name") == "E2"), via: api)
                    .first)
            try fresh.delete(second)
            try await fresh.save(via: api)
            let read: [Company] = try await Company.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.employees.map(\.name) == ["E1", "E3"])
            var deletedCompany = try #require(read.first)
            try await deletedCompany.delete(ManagedObjectContext(store: store), via: api)
            #expect(try Fixtures.count(store, "Employee") == 2)
        },
    ]
}
