@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Queries: predicates, sorting, windows, pending changes, validation before any store call.
enum QuerySuite {
    /// Saves a staff of six and returns the store.
    static func staff(_ make: StoreFactory, via api: APIMode) async throws -> any Store {
        let store = try make()
        var staff = [
            Employee(name: "Ann", age: 25, position: "Lead", department: "Sales", job: "Seller"),
            Employee(name: "bob", age: 35, position: nil, department: "Sales", job: "Seller"),
            Employee(name: "Cid", age: 45, position: "Head", department: "IT", job: "Admin"),
            Employee(name: "Dora", age: 31, position: nil, department: "IT", job: "Developer"),
            Employee(name: "Eve", age: 52, position: "Boss", department: "Board", job: "CEO"),
            Employee(name: "Fay", age: 35, position: nil, department: "Sales", job: "Seller"),
        ]
        try await staff.saveAll(ManagedObjectContext(store: store), via: api)
        return store
    }

    static func names(
        _ store: any Store, _ predicate: CVPredicate?, _ sort: [CVSortDescriptor] = [.init(key: "name")],
        via api: APIMode
    ) async throws -> [String] {
        let read: [Employee] = try await Employee.query(
            ManagedObjectContext(store: store), predicate: predicate, sortDescriptors: sort, via: api)
        return read.map(\.name)
    }

    static let cases: [SuiteCase] = [
        SuiteCase("a case-insensitive match maps the letters of the store's Unicode version, and only those") {
            make, api in
            let store = try make()
            // U+2C2F (Unicode 14) lower-cases to U+2C5F; U+A7CB (Unicode 16) to U+0264, U+A7CE (17) to U+A7CF.
            var staff = ["\u{2C2F}ora", "\u{A7CB}ik", "\u{A7CE}z"].map { Fixtures.employee($0) }
            try await staff.saveAll(ManagedObjectContext(store: store), via: api)
            let folding = CaseFolding(unicodeVersion: store.refinements.caseMappingVersion)
            for fragment in ["\u{2C5F}", "\u{0264}", "\u{A7CF}"] {
                let expected = staff.map(\.name).filter {
                    folding.lowercased($0).contains(folding.lowercased(fragment))
                }
                let predicate = CVPredicate.key("name").contains(fragment, caseInsensitive: true)
                #expect(try await names(store, predicate, via: api) == expected, "\(fragment)")
                // A pending object is matched in memory with the store's mapping too.
                let context = ManagedObjectContext(store: store)
                var pending = Fixtures.employee("\u{A7CB}\u{2C2F}\u{A7CE}")
                try await pending.toObject(context, via: api)
                let withPending: [Employee] = try await Employee.query(context, predicate: predicate, via: api)
                #expect(
                    withPending.contains { $0.name == pending.name }
                        == (folding.lowercased(pending.name).contains(folding.lowercased(fragment))))
            }
            // Unicode 14 is older than any supported server's ICU; 16 and 17 are newer than the tests' server.
            #expect(
                try await names(store, CVPredicate.key("name").contains("\u{2C5F}", caseInsensitive: true), via: api)
                    == ["\u{2C2F}ora"])
        },
        SuiteCase("queryStored reads what query reads, as committed, with one fetch and nothing registered") {
            make, api in
            let store = CountingStore(try await staff(make, via: api))
            let predicate: CVPredicate = .comparison(key: "age", .greaterThan, .int16(30))
            let sort = [CVSortDescriptor(key: "age", ascending: false), CVSortDescriptor(key: "name")]
            let queried: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: predicate, sortDescriptors: sort, via: api)
            let before = store.fetches.count
            let stored: [Employee] = try await Employee.queryStored(
                store, predicate: predicate, sortDescriptors: sort, via: api)
            #expect(store.fetches.count == before + 1)
            // Text sorts in C order: "Fay" before "bob".
            #expect(stored.map(\.name) == ["Eve", "Cid", "Fay", "bob", "Dora"])
            #expect(stored.map(\.name) == queried.map(\.name))
            #expect(stored.map(\.objectID) == queried.map(\.objectID))
            #expect(stored.allSatisfy { $0.objectID != nil })
            #expect(stored.map(\.position) == queried.map(\.position))
            // A window, as query's.
            let window: [Employee] = try await Employee.queryStored(
                store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "name")], fetchLimit: 2, fetchOffset: 1,
                via: api)
            #expect(window.map(\.name) == ["Cid", "Dora"])

            // A context's unsaved change is not seen: the rows are read as committed.
            let context = ManagedObjectContext(store: store)
            var changed = try #require(queried.first)
            changed.name = "Renamed"
            try await changed.toObject(context, via: api)
            let committed: [Employee] = try await Employee.queryStored(store, predicate: nil, via: api)
            #expect(!committed.contains { $0.name == "Renamed" })

            // A struct read this way saves over its own row (its objectID), as one read through a context does.
            var fromStored = try #require(stored.first)
            fromStored.age = 60
            try await fromStored.save(ManagedObjectContext(store: store), via: api)
            let after: [Employee] = try await Employee.queryStored(
                store, predicate: .comparison(key: "age", .equal, .int16(60)), via: api)
            #expect(after.map(\.objectID) == [fromStored.objectID])
            let all: [Employee] = try await Employee.queryStored(store, predicate: nil, via: api)
            #expect(all.count == 6)
        },
        SuiteCase("queryStored of an entity with relationships reads them through a context of its own") {
            make, api in
            let store = try make()
            let staff = [Fixtures.employee("Ann"), Fixtures.employee("Bob")]
            var company = Company(name: "Acme", employees: staff)
            try await company.save(ManagedObjectContext(store: store), via: api)
            let stored: [Company] = try await Company.queryStored(store, predicate: nil, via: api)
            #expect(stored.map(\.name) == ["Acme"])
            #expect(stored.first?.employees.map(\.name) == ["Ann", "Bob"])
            #expect(stored.first?.objectID == company.objectID)
        },
        SuiteCase("queryStored checks the predicate against the model before the store sees it") { make, api in
            let store = CountingStore(try make())
            await #expect(throws: CVManagedStructError.self) {
                let _: [Employee] = try await Employee.queryStored(
                    store, predicate: .comparison(key: "nope", .equal, .int16(1)), via: api)
            }
            #expect(store.fetches.isEmpty)
        },
        SuiteCase("a windowed fetch with pending changes reads a widened window, not the table") { make, api in
            let store = CountingStore(try make())
            let setup = ManagedObjectContext(store: store)
            var staff = (0..<60).map { Fixtures.employee(String(format: "e%02d", $0)) }
            try await staff.saveAll(setup, via: api)
            let context = ManagedObjectContext(store: store)
            let all = try await context.fetch(FetchRequest(entityName: "Employee"), via: api)
            try all[1].setValue("z-renamed", forKey: "name")
            try all[3].setValue("a-renamed", forKey: "name")
            try context.delete(all[5])
            try await Fixtures.employee("e04x").toObject(context, via: api)
            _ = try context.insert(entityName: "Company")
            let sorted = [CVSortDescriptor(key: "name")]
            let before = store.fetches.count
            let window: [Employee] = try await Employee.query(
                context, predicate: nil, sortDescriptors: sorted, fetchLimit: 5, fetchOffset: 2, via: api)
            let sent = try #require(store.fetches.dropFirst(before).first)
            #expect(store.fetches.count == before + 1)
            #expect(sent.request.fetchLimit == 2 + 5 + 3)
            #expect(sent.request.fetchOffset == 0)
            #expect(sent.rows == 10)
            let everything: [Employee] = try await Employee.query(
                context, predicate: nil, sortDescriptors: sorted, via: api)
            #expect(window.map(\.name) == Array(everything.map(\.name)[2..<7]))
            #expect(window.map(\.name) == ["e02", "e04", "e04x", "e06", "e07"])
        },
        SuiteCase("comparisons, AND, OR and NOT") { make, api in
            let store = try await staff(make, via: api)
            #expect(
                try await names(store, .key("age") > 30 && .key("department") == "Sales", via: api) == ["Fay", "bob"])
            #expect(try await names(store, .key("age") <= 25 || .key("age") >= 52, via: api) == ["Ann", "Eve"])
            #expect(try await names(store, !(.key("department") == "Sales"), via: api) == ["Cid", "Dora", "Eve"])
            #expect(try await names(store, .key("age") != 35, via: api) == ["Ann", "Cid", "Dora", "Eve"])
        },
        SuiteCase("IN, BETWEEN and null tests") { make, api in
            let store = try await staff(make, via: api)
            #expect(
                try await names(store, CVPredicate.key("name").in(["Ann", "Eve", "Zed"]), via: api) == ["Ann", "Eve"])
            #expect(
                try await names(store, CVPredicate.key("age").between(31, 45), via: api) == [
                    "Cid", "Dora", "Fay", "bob",
                ])
            #expect(try await names(store, .key("position") == nil, via: api) == ["Dora", "Fay", "bob"])
            #expect(try await names(store, .key("position") != nil, via: api) == ["Ann", "Cid", "Eve"])
            // SQL's three-valued logic: a comparison with null is neither true nor false.
            #expect(try await names(store, !(.key("position") == "Lead"), via: api) == ["Cid", "Eve"])
        },
        SuiteCase("string matches, case-sensitive and not") { make, api in
            let store = try await staff(make, via: api)
            #expect(try await names(store, CVPredicate.key("name").contains("o"), via: api) == ["Dora", "bob"])
            #expect(try await names(store, CVPredicate.key("name").beginsWith("b"), via: api) == ["bob"])
            #expect(
                try await names(store, CVPredicate.key("name").beginsWith("B", caseInsensitive: true), via: api) == [
                    "bob"
                ])
            #expect(
                try await names(store, CVPredicate.key("name").endsWith("A", caseInsensitive: true), via: api) == [
                    "Dora"
                ])
            #expect(try await names(store, CVPredicate.key("job").like("Se%er"), via: api) == ["Ann", "Fay", "bob"])
            #expect(try await names(store, CVPredicate.key("name").like("_v_"), via: api) == ["Eve"])
        },
        SuiteCase("sorting, ties by primary key, limit and offset") { make, api in
            let store = try await staff(make, via: api)
            let byAge: [CVSortDescriptor] = [.key("age").descending, .key("name").ascending]
            #expect(try await names(store, nil, byAge, via: api) == ["Eve", "Cid", "Fay", "bob", "Dora", "Ann"])
            // Code-point order: upper case before lower case.
            #expect(try await names(store, nil, via: api) == ["Ann", "Cid", "Dora", "Eve", "Fay", "bob"])
            let page: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "age")],
                fetchLimit: 2, fetchOffset: 2, via: api)
            #expect(page.map(\.name) == ["bob", "Fay"])
            // Nulls sort last ascending and first descending.
            #expect(
                try await names(store, nil, [.init(key: "position"), .init(key: "name")], via: api).suffix(3) == [
                    "Dora", "Fay", "bob",
                ])
            #expect(
                try await names(store, nil, [.init(key: "position", ascending: false), .init(key: "name")], via: api)
                    .prefix(3)
                    == ["Dora", "Fay", "bob"])
        },
        SuiteCase("queries see pending inserts, changes and deletes") { make, api in
            let store = try await staff(make, via: api)
            let context = ManagedObjectContext(store: store)
            let sales: CVPredicate = .key("department") == "Sales"
            var current: [Employee] = try await Employee.query(
                context, predicate: sales, sortDescriptors: [.init(key: "name")], via: api)
            #expect(current.map(\.name) == ["Ann", "Fay", "bob"])
            try await Fixtures.employee("Gus").toObject(context, via: api)
            var fay = try #require(current.first { $0.name == "Fay" })
            fay.department = "IT"
            try await fay.toObject(context, via: api)
            let ann = try await context.existingObject(with: try #require(current.first?.objectID), via: api)
            try context.delete(ann)
            current = try await Employee.query(
                context, predicate: sales, sortDescriptors: [.init(key: "name")], via: api)
            #expect(current.map(\.name) == ["Gus", "bob"])
            let window: [Employee] = try await Employee.query(
                context, predicate: nil, sortDescriptors: [.init(key: "age", ascending: false)], fetchLimit: 2, via: api
            )
            #expect(window.map(\.name) == ["Eve", "Cid"])
            // Nothing was saved.
            #expect(try await names(store, sales, via: api) == ["Ann", "Fay", "bob"])
        },
        SuiteCase("an unknown key or a wrong operand throws before any store call") { make, api in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            await #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "salary")) {
                let _: [Employee] = try await Employee.query(context, predicate: .key("salary") > 10, via: api)
            }
            await #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "salary")) {
                let _: [Employee] = try await Employee.query(
                    context, predicate: nil, sortDescriptors: [.init(key: "salary")], via: api)
            }
            await #expect(throws: CVManagedStructError.self) {
                let _: [Employee] = try await Employee.query(context, predicate: .key("age") > 70_000, via: api)
            }
            await #expect(throws: CVManagedStructError.self) {
                let _: [Employee] = try await Employee.query(context, predicate: .key("age") == "old", via: api)
            }
            #expect(store.count("fetch") == 0)
        },
        SuiteCase("a LIKE pattern ending in an unescaped backslash throws before any store call") { make, api in
            let store = CountingStore(try make())
            var staff = [Fixtures.employee("a\\b"), Fixtures.employee("c")]
            try await staff.saveAll(ManagedObjectContext(store: store), via: api)
            store.reset()
            let context = ManagedObjectContext(store: store)
            let bad = CVPredicate.stringMatch(key: "name", .like, "a\\", caseInsensitive: false)
            await #expect(
                throws: CVManagedStructError.invalidPredicate(
                    entity: "Employee", key: "name",
                    message: "LIKE pattern ends with an unescaped \\ (write \\\\ for one)")
            ) {
                let _: [Employee] = try await Employee.query(context, predicate: bad, via: api)
            }
            #expect(store.count("fetch") == 0)
            #expect(throws: CVManagedStructError.self) {
                try store.base.fetch(FetchRequest(entityName: "Employee", predicate: bad))
            }
            // An escaped backslash is a literal one, in both stores.
            let escaped = CVPredicate.stringMatch(key: "name", .like, "a\\\\%", caseInsensitive: false)
            let found: [Employee] = try await Employee.query(context, predicate: escaped, via: api)
            #expect(found.map(\.name) == ["a\\b"])
        },
        SuiteCase("a to-one relationship can be tested for null") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            try await Article(id: 1, title: "With", text: "", author: Author(id: "a", name: "A"), categories: [])
                .toObject(context, via: api)
            try await Article(id: 2, title: "Without", text: "", author: nil, categories: []).toObject(
                context, via: api)
            let pending: [Article] = try await Article.query(context, predicate: .key("author") == nil, via: api)
            #expect(pending.map(\.title) == ["Without"])
            try await context.save(via: api)
            let saved: [Article] = try await Article.query(
                ManagedObjectContext(store: store), predicate: .key("author") != nil, via: api)
            #expect(saved.map(\.title) == ["With"])
        },
    ]
}
