@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Queries: predicates, sorting, windows, pending changes, validation before any store call.
enum QuerySuite {
    /// Saves a staff of six and returns the store.
    static func staff(_ make: StoreFactory) throws -> any Store {
        let store = try make()
        var staff = [
            Employee(name: "Ann", age: 25, position: "Lead", department: "Sales", job: "Seller"),
            Employee(name: "bob", age: 35, position: nil, department: "Sales", job: "Seller"),
            Employee(name: "Cid", age: 45, position: "Head", department: "IT", job: "Admin"),
            Employee(name: "Dora", age: 31, position: nil, department: "IT", job: "Developer"),
            Employee(name: "Eve", age: 52, position: "Boss", department: "Board", job: "CEO"),
            Employee(name: "Fay", age: 35, position: nil, department: "Sales", job: "Seller"),
        ]
        try staff.saveAll(ManagedObjectContext(store: store))
        return store
    }

    static func names(_ store: any Store, _ predicate: CVPredicate?, _ sort: [CVSortDescriptor] = [.init(key: "name")])
        throws -> [String]
    {
        let read: [Employee] = try Employee.query(
            ManagedObjectContext(store: store), predicate: predicate, sortDescriptors: sort)
        return read.map(\.name)
    }

    static let cases: [SuiteCase] = [
        SuiteCase("a windowed fetch with pending changes reads a widened window, not the table") { make in
            let store = CountingStore(try make())
            let setup = ManagedObjectContext(store: store)
            var staff = (0..<60).map { Fixtures.employee(String(format: "e%02d", $0)) }
            try staff.saveAll(setup)
            let context = ManagedObjectContext(store: store)
            let all = try context.fetch(FetchRequest(entityName: "Employee"))
            try all[1].setValue("z-renamed", forKey: "name")
            try all[3].setValue("a-renamed", forKey: "name")
            try context.delete(all[5])
            try Fixtures.employee("e04x").toObject(context)
            _ = try context.insert(entityName: "Company")
            let sorted = [CVSortDescriptor(key: "name")]
            let before = store.fetches.count
            let window: [Employee] = try Employee.query(
                context, predicate: nil, sortDescriptors: sorted, fetchLimit: 5, fetchOffset: 2)
            let sent = try #require(store.fetches.dropFirst(before).first)
            #expect(store.fetches.count == before + 1)
            #expect(sent.request.fetchLimit == 2 + 5 + 3)
            #expect(sent.request.fetchOffset == 0)
            #expect(sent.rows == 10)
            let everything: [Employee] = try Employee.query(context, predicate: nil, sortDescriptors: sorted)
            #expect(window.map(\.name) == Array(everything.map(\.name)[2..<7]))
            #expect(window.map(\.name) == ["e02", "e04", "e04x", "e06", "e07"])
        },
        SuiteCase("comparisons, AND, OR and NOT") { make in
            let store = try staff(make)
            #expect(try names(store, .key("age") > 30 && .key("department") == "Sales") == ["Fay", "bob"])
            #expect(try names(store, .key("age") <= 25 || .key("age") >= 52) == ["Ann", "Eve"])
            #expect(try names(store, !(.key("department") == "Sales")) == ["Cid", "Dora", "Eve"])
            #expect(try names(store, .key("age") != 35) == ["Ann", "Cid", "Dora", "Eve"])
        },
        SuiteCase("IN, BETWEEN and null tests") { make in
            let store = try staff(make)
            #expect(try names(store, CVPredicate.key("name").in(["Ann", "Eve", "Zed"])) == ["Ann", "Eve"])
            #expect(try names(store, CVPredicate.key("age").between(31, 45)) == ["Cid", "Dora", "Fay", "bob"])
            #expect(try names(store, .key("position") == nil) == ["Dora", "Fay", "bob"])
            #expect(try names(store, .key("position") != nil) == ["Ann", "Cid", "Eve"])
            // SQL's three-valued logic: a comparison with null is neither true nor false.
            #expect(try names(store, !(.key("position") == "Lead")) == ["Cid", "Eve"])
        },
        SuiteCase("string matches, case-sensitive and not") { make in
            let store = try staff(make)
            #expect(try names(store, CVPredicate.key("name").contains("o")) == ["Dora", "bob"])
            #expect(try names(store, CVPredicate.key("name").beginsWith("b")) == ["bob"])
            #expect(try names(store, CVPredicate.key("name").beginsWith("B", caseInsensitive: true)) == ["bob"])
            #expect(try names(store, CVPredicate.key("name").endsWith("A", caseInsensitive: true)) == ["Dora"])
            #expect(try names(store, CVPredicate.key("job").like("Se%er")) == ["Ann", "Fay", "bob"])
            #expect(try names(store, CVPredicate.key("name").like("_v_")) == ["Eve"])
        },
        SuiteCase("sorting, ties by primary key, limit and offset") { make in
            let store = try staff(make)
            let byAge: [CVSortDescriptor] = [.key("age").descending, .key("name").ascending]
            #expect(try names(store, nil, byAge) == ["Eve", "Cid", "Fay", "bob", "Dora", "Ann"])
            // Code-point order: upper case before lower case.
            #expect(try names(store, nil) == ["Ann", "Cid", "Dora", "Eve", "Fay", "bob"])
            let page: [Employee] = try Employee.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "age")],
                fetchLimit: 2, fetchOffset: 2)
            #expect(page.map(\.name) == ["bob", "Fay"])
            // Nulls sort last ascending and first descending.
            #expect(
                try names(store, nil, [.init(key: "position"), .init(key: "name")]).suffix(3) == ["Dora", "Fay", "bob"])
            #expect(
                try names(store, nil, [.init(key: "position", ascending: false), .init(key: "name")]).prefix(3)
                    == ["Dora", "Fay", "bob"])
        },
        SuiteCase("queries see pending inserts, changes and deletes") { make in
            let store = try staff(make)
            let context = ManagedObjectContext(store: store)
            let sales: CVPredicate = .key("department") == "Sales"
            var current: [Employee] = try Employee.query(
                context, predicate: sales, sortDescriptors: [.init(key: "name")])
            #expect(current.map(\.name) == ["Ann", "Fay", "bob"])
            try Fixtures.employee("Gus").toObject(context)
            var fay = try #require(current.first { $0.name == "Fay" })
            fay.department = "IT"
            try fay.toObject(context)
            let ann = try context.existingObject(with: try #require(current.first?.objectID))
            try context.delete(ann)
            current = try Employee.query(context, predicate: sales, sortDescriptors: [.init(key: "name")])
            #expect(current.map(\.name) == ["Gus", "bob"])
            let window: [Employee] = try Employee.query(
                context, predicate: nil, sortDescriptors: [.init(key: "age", ascending: false)], fetchLimit: 2)
            #expect(window.map(\.name) == ["Eve", "Cid"])
            // Nothing was saved.
            #expect(try names(store, sales) == ["Ann", "Fay", "bob"])
        },
        SuiteCase("an unknown key or a wrong operand throws before any store call") { make in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "salary")) {
                let _: [Employee] = try Employee.query(context, predicate: .key("salary") > 10)
            }
            #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "salary")) {
                let _: [Employee] = try Employee.query(context, predicate: nil, sortDescriptors: [.init(key: "salary")])
            }
            #expect(throws: CVManagedStructError.self) {
                let _: [Employee] = try Employee.query(context, predicate: .key("age") > 70_000)
            }
            #expect(throws: CVManagedStructError.self) {
                let _: [Employee] = try Employee.query(context, predicate: .key("age") == "old")
            }
            #expect(store.count("fetch") == 0)
        },
        SuiteCase("a LIKE pattern ending in an unescaped backslash throws before any store call") { make in
            let store = CountingStore(try make())
            var staff = [Fixtures.employee("a\\b"), Fixtures.employee("c")]
            try staff.saveAll(ManagedObjectContext(store: store))
            store.reset()
            let context = ManagedObjectContext(store: store)
            let bad = CVPredicate.stringMatch(key: "name", .like, "a\\", caseInsensitive: false)
            #expect(
                throws: CVManagedStructError.invalidPredicate(
                    entity: "Employee", key: "name",
                    message: "LIKE pattern ends with an unescaped \\ (write \\\\ for one)")
            ) {
                let _: [Employee] = try Employee.query(context, predicate: bad)
            }
            #expect(store.count("fetch") == 0)
            #expect(throws: CVManagedStructError.self) {
                try store.base.fetch(FetchRequest(entityName: "Employee", predicate: bad))
            }
            // An escaped backslash is a literal one, in both stores.
            let escaped = CVPredicate.stringMatch(key: "name", .like, "a\\\\%", caseInsensitive: false)
            let found: [Employee] = try Employee.query(context, predicate: escaped)
            #expect(found.map(\.name) == ["a\\b"])
        },
        SuiteCase("a to-one relationship can be tested for null") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            try Article(id: 1, title: "With", text: "", author: Author(id: "a", name: "A"), categories: [])
                .toObject(context)
            try Article(id: 2, title: "Without", text: "", author: nil, categories: []).toObject(context)
            let pending: [Article] = try Article.query(context, predicate: .key("author") == nil)
            #expect(pending.map(\.title) == ["Without"])
            try context.save()
            let saved: [Article] = try Article.query(
                ManagedObjectContext(store: store), predicate: .key("author") != nil)
            #expect(saved.map(\.title) == ["With"])
        },
    ]
}
