@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Typed queries (`#Predicate`, `SortDescriptor`): every store returns what `Predicate.evaluate` says of the
/// saved structs, unsupported expressions throw before any store call, and pending changes count.
enum TypedQuerySuite {
    static let names = ["Ann", "bob", "Cid", "dora", "Eve", "ÄRGER", "ärger", "Straße", "İpek", "x%_y", "ΟΔΟΣ"]

    /// 40 employees with random ages, optional positions and departments.
    static func staff(_ random: inout SeededRandom) -> [Employee] {
        (0..<40).map { index in
            Employee(
                name: "\(names[index % names.count])\(index % 3 == 0 ? "" : String(index))",
                age: Int16.random(in: 20...60, using: &random),
                position: Bool.random(using: &random) ? nil : ["Lead", "Head", "lead", ""][index % 4],
                department: ["Sales", "IT", "Board"].randomElement(using: &random) ?? "IT", job: "J")
        }
    }

    /// Predicates over employees, built from random constants: each is compared with `Predicate.evaluate`.
    static func predicates(_ random: inout SeededRandom) -> [Predicate<Employee>] {
        let age = Int16.random(in: 20...60, using: &random)
        let other = Int16.random(in: 20...60, using: &random)
        let low = min(age, other)
        let high = max(age, other)
        let position = ["Lead", "Head", "lead", "", "None"].randomElement(using: &random) ?? "Lead"
        let department = ["Sales", "IT", "Board"].randomElement(using: &random) ?? "IT"
        let fragment = ["a", "ä", "Ä", "e", "%", "_", "ss", "i", "ο", ""].randomElement(using: &random) ?? "a"
        let prefix = ["A", "b", "ä", "Ä", "x%", "İ", ""].randomElement(using: &random) ?? "A"
        let departments = Array(["Sales", "IT", "Board", "Nowhere"].shuffled(using: &random).prefix(2))
        let positions: [String?] = [nil, position]
        let fallback = Bool.random(using: &random) ? "Lead" : "Nobody"
        let flag = Bool.random(using: &random)
        let same: ComparisonResult? = .orderedSame
        return [
            #Predicate { $0.age > age && $0.department == department },
            #Predicate { $0.age <= age || $0.age >= high },
            #Predicate { !($0.department == department) },
            #Predicate { $0.position == position },
            #Predicate { $0.position != position },
            #Predicate { !($0.position == position) && $0.age < high },
            #Predicate { $0.position == nil },
            #Predicate { $0.position != nil || $0.age == age },
            #Predicate { ($0.position ?? fallback) == "Lead" },
            #Predicate { ($0.position ?? fallback) != "Lead" },
            #Predicate { departments.contains($0.department) },
            #Predicate { !departments.contains($0.department) },
            #Predicate { positions.contains($0.position) },
            #Predicate { (low...high).contains($0.age) },
            #Predicate { (low..<high).contains($0.age) && $0.department != department },
            #Predicate { $0.name.contains(fragment) },
            #Predicate { !$0.name.contains(fragment) },
            #Predicate { $0.name.starts(with: prefix) },
            #Predicate { $0.name.localizedStandardContains(fragment) },
            #Predicate { !$0.name.localizedStandardContains(fragment) || $0.age > age },
            #Predicate { $0.position?.localizedStandardContains("LEAD") == true },
            #Predicate { $0.position.flatMap { $0.contains(fragment) } == flag },
            #Predicate { $0.position.flatMap { $0.caseInsensitiveCompare(position) } == same },
            #Predicate { $0.name.isEmpty || ($0.position?.isEmpty ?? false) },
            #Predicate { _ in flag },
        ]
    }

    /// The names of `expected` that match, in the stores' name order (Unicode scalars).
    static func names(_ employees: [Employee]) -> [String] {
        employees.map(\.name).sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
    }

    static let cases: [SuiteCase] = [
        SuiteCase("typed predicates return what Predicate.evaluate says, sorted and windowed") { make, api in
            let store = try make()
            var random = SeededRandom(seed: 11)
            var staff = staff(&random)
            try await staff.saveAll(ManagedObjectContext(store: store), via: api)
            var results = Set<Int>()
            for round in 0..<6 {
                for (index, predicate) in predicates(&random).enumerated() {
                    let context = ManagedObjectContext(store: store)
                    let expected = try staff.filter { try predicate.evaluate($0) }
                    let read = try await Employee.query(
                        context, predicate: predicate, sortBy: [SortDescriptor(\.name)], via: api)
                    #expect(read.map(\.name) == names(expected), "round \(round), predicate \(index)")
                    #expect(try await Employee.count(context, predicate: predicate, via: api) == expected.count)
                    #expect(try await Employee.exists(context, predicate: predicate, via: api) == !expected.isEmpty)
                    results.insert(expected.count)
                }
            }
            #expect(results.count > 10, "result sizes \(results.sorted())")
            let byAge = [SortDescriptor(\Employee.age, order: .reverse), SortDescriptor(\Employee.name)]
            let window = try await Employee.query(
                ManagedObjectContext(store: store), predicate: #Predicate { $0.age >= 30 }, sortBy: byAge, limit: 5,
                offset: 2, via: api)
            let all = staff.filter { $0.age >= 30 }.sorted {
                $0.age != $1.age
                    ? $0.age > $1.age : $0.name.unicodeScalars.lexicographicallyPrecedes($1.name.unicodeScalars)
            }
            #expect(window.map(\.name) == Array(all.dropFirst(2).prefix(5)).map(\.name))
        },
        SuiteCase("typed predicates follow to-one and to-many relationships") { make, api in
            let store = try make()
            let ann = Author(id: "a1", name: "Ann")
            let bob = Author(id: "a2", name: "Bob")
            let tech = Fixtures.category("Tech")
            let news = Fixtures.category("News")
            let articles = [
                Article(id: 1, title: "One", text: "", author: ann, categories: [tech, news]),
                Article(id: 2, title: "Two", text: "", author: bob, categories: [news]),
                Article(id: 3, title: "Three", text: "", author: nil, categories: []),
                Article(id: 4, title: "Four", text: "", author: ann, categories: [tech]),
            ]
            try await articles.saveAll(ManagedObjectContext(store: store), via: api)
            let predicates: [Predicate<Article>] = [
                #Predicate { $0.author?.name == "Ann" },
                #Predicate { $0.author?.name != "Ann" },
                #Predicate { $0.author == nil },
                #Predicate { $0.author != nil && $0.id > 1 },
                #Predicate { $0.categories.contains { $0.name == "Tech" } },
                #Predicate { !$0.categories.contains { $0.name == "Tech" } },
                #Predicate { $0.categories.allSatisfy { $0.name == "News" } },
                #Predicate { $0.categories.contains { $0.name.starts(with: "N") } && $0.author?.name == "Bob" },
            ]
            for (index, predicate) in predicates.enumerated() {
                let expected = try articles.filter { try predicate.evaluate($0) }.map(\.id)
                let read = try await Article.query(
                    ManagedObjectContext(store: store), predicate: predicate, sortBy: [SortDescriptor(\.id)], via: api)
                #expect(read.map(\.id) == expected, "predicate \(index)")
            }
            var company = Company(
                name: "Acme", employees: [Fixtures.employee("Old", age: 61), Fixtures.employee("Young", age: 20)])
            try await company.save(ManagedObjectContext(store: store), via: api)
            var empty = Company(name: "Empty", employees: [])
            try await empty.save(ManagedObjectContext(store: store), via: api)
            let seniors = try await Company.query(
                ManagedObjectContext(store: store), predicate: #Predicate { $0.employees.contains { $0.age > 60 } },
                via: api)
            #expect(seniors.map(\.name) == ["Acme"])
            let allYoung = try await Company.query(
                ManagedObjectContext(store: store), predicate: #Predicate { $0.employees.allSatisfy { $0.age < 30 } },
                sortBy: [SortDescriptor(\.name)], via: api)
            #expect(allYoung.map(\.name) == ["Empty"])
        },
        SuiteCase("typed queries, counts and exists include unsaved changes") { make, api in
            let store = try make()
            var saved = [Fixtures.employee("Ann", age: 40), Fixtures.employee("Bob", age: 50)]
            try await saved.saveAll(ManagedObjectContext(store: store), via: api)
            let context = ManagedObjectContext(store: store)
            try await Fixtures.employee("Cy", age: 45).toObject(context, via: api)
            let over = #Predicate<Employee> { $0.age > 42 }
            #expect(
                try await Employee.query(context, predicate: over, sortBy: [SortDescriptor(\.name)], via: api).map(
                    \.name) == ["Bob", "Cy"])
            #expect(try await Employee.count(context, predicate: over, via: api) == 2)
            #expect(try await Employee.count(ManagedObjectContext(store: store), predicate: over, via: api) == 1)
            #expect(try await Employee.exists(context, predicate: #Predicate { $0.name == "Cy" }, via: api))
            #expect(
                try await !Employee.exists(
                    ManagedObjectContext(store: store), predicate: #Predicate { $0.name == "Cy" }, via: api))
            #expect(try Employee.count(context, predicate: .key("age") > 42) == 2)
            #expect(try Employee.exists(context, predicate: .key("name") == "Zed") == false)
        },
        SuiteCase("an expression with no translation throws, naming it, before any store call") { make, api in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            let unsupported: [(Predicate<Employee>, String)] = [
                (#Predicate { $0.age + 1 > 30 }, "Arithmetic"),
                (#Predicate { $0.name == $0.job }, "a key path on one side and a value"),
                (#Predicate { $0.name.count > 3 }, "only stored properties"),
            ]
            for (predicate, fragment) in unsupported {
                await #expect {
                    _ = try await Employee.query(context, predicate: predicate, via: api)
                } throws: { error in
                    guard let error = error as? CVManagedStructError, error.code == .unsupportedPredicate else {
                        return false
                    }
                    return "\(error)".contains(fragment)
                }
            }
            #expect(store.count("fetch") == 0)
        },
        SuiteCase("enums compare by raw value and sort descriptors name attributes") { make, api in
            let store = try make()
            var cars = [Fixtures.car("A"), Fixtures.car("B"), Fixtures.car("C")]
            cars[1].kind = .sedan
            cars[2].seats = 7
            try await cars.saveAll(ManagedObjectContext(store: store), via: api)
            let sedan = CarKind.sedan
            let read = try await Car.query(
                ManagedObjectContext(store: store), predicate: #Predicate { $0.kind == sedan || $0.seats > 5 },
                sortBy: [SortDescriptor(\.name, order: .reverse)], via: api)
            #expect(read.map(\.name) == ["C", "B"])
            let byRaw = try await Car.query(
                ManagedObjectContext(store: store), predicate: #Predicate { $0.kind.rawValue == "sedan" }, via: api)
            #expect(byRaw.map(\.name) == ["B"])
        },
    ]
}
