@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ

/// `corevalue demo --url URL [--schema S]`: the example model on PostgreSQL, step by step.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "save, query, reorder and delete example structs, printing what it did"
    static let usage = """
        usage: corevalue demo [--url URL] [--schema S]

        Runs the example model (employees in companies, unique authors, articles and categories, cars)
        against the database (--url, or DATABASE_URL when it is absent, which keeps a password out of
        `ps`): saves, queries, reorders, updates and deletes structs and prints what it
        wrote and read back. The schema (default corevalue_demo) must be migrated first (corevalue migrate
        --schema S); the demo empties its tables before it starts, so it can run again and again.
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(["url", "schema"])
        let url = try arguments.databaseURL()
        let schema = arguments.value("schema") ?? "corevalue_demo"
        let model = try ExampleModel.make()
        // Opening the store first checks the schema, so an unmigrated one is reported as such.
        let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: schema))
        try emptyTables(url: url, schema: schema, model: model)
        defer { store.close() }
        var demo = Demo(store: store)
        try demo.run()
    }

    /// Empties the example tables so every run starts from the same state.
    private static func emptyTables(url: String, schema: String, model: ManagedObjectModel) throws {
        let connection = try Connection(url)
        defer { connection.close() }
        // Not the store's own tables: emptying the commit table would remove its sentinel row.
        let tables = SchemaMapping(model: model).tables.filter { !SchemaMapping.isStoreTable($0.name) }
            .map { SQLIdentifier($0.name, schema: schema).quoted }
        try connection.execute("TRUNCATE \(tables.joined(separator: ", ")) RESTART IDENTITY CASCADE")
    }
}

/// The demo's steps; each prints what it did and what it read back.
private struct Demo {
    let store: PostgresStore

    mutating func run() throws {
        print("CoreValue for PostgreSQL demo (schema verified against the model)\n")
        var company = try saveCompany()
        try queryEmployees()
        company = try reorder(company)
        try updateAndDelete(company)
        try uniqueStructs()
        try everyType()
        let stats = store.statistics
        print(
            "\nDone: \(stats.statements) statements in \(stats.transactions) transactions, "
                + "\(stats.retries) retries.")
    }

    private func step(_ title: String) { print("== \(title)") }

    private func saveCompany() throws -> Company {
        step("Save a company with three employees (an ordered to-many relationship)")
        var company = Company(
            name: "Acme",
            employees: [
                Employee(name: "Ada", age: 36, position: "Lead", department: "Engineering", job: "Backend"),
                Employee(name: "Grace", age: 45, position: nil, department: "Sales", job: "Accounts"),
                Employee(name: "Linus", age: 28, position: "Intern", department: "Engineering", job: "Kernel"),
            ])
        try company.save(ManagedObjectContext(store: store))
        print("  saved \(company.name) as \(company.objectID.map(String.init(describing:)) ?? "?")")
        let loaded = try reload(company)
        print("  read back: \(loaded.employees.map(\.name).joined(separator: ", "))\n")
        return loaded
    }

    private func queryEmployees() throws {
        step("Query: employees older than 30, sorted by name")
        let found: [Employee] = try Employee.query(
            ManagedObjectContext(store: store), predicate: .key("age") > Int16(30),
            sortDescriptors: [CVSortDescriptor(key: "name")])
        for employee in found { print("  \(employee.name), \(employee.age), \(employee.department)") }
        let engineers: [Employee] = try Employee.query(
            ManagedObjectContext(store: store),
            predicate: .key("department") == "Engineering" && .key("position") != nil)
        print("  engineers with a position: \(engineers.map(\.name).sorted().joined(separator: ", "))\n")
    }

    private func reorder(_ company: Company) throws -> Company {
        step("Reorder: reverse the employees and save")
        var company = company
        company.employees.reverse()
        try company.save(ManagedObjectContext(store: store))
        let loaded = try reload(company)
        print("  stored order now: \(loaded.employees.map(\.name).joined(separator: ", "))\n")
        return loaded
    }

    private func updateAndDelete(_ company: Company) throws {
        step("Update one employee, delete another")
        let context = ManagedObjectContext(store: store)
        guard var first = company.employees.first, var last = company.employees.last, company.employees.count > 1
        else {
            throw CVManagedStructError.structUpdateError(message: "\(company.name) lost its employees")
        }
        first.position = "Staff"
        try first.save(context)
        let deleted = try last.delete(context)
        print(
            "  \(first.name) is now \(first.position ?? "-"); deleted \(last.name): \(deleted), objectID now \(last.objectID.map(String.init(describing:)) ?? "nil")"
        )
        let loaded = try reload(company)
        print(
            "  \(loaded.name) has \(loaded.employees.count) employees: \(loaded.employees.map(\.name).joined(separator: ", "))\n"
        )
    }

    private func uniqueStructs() throws {
        step("Unique structs: authors, articles and categories saved by identifier")
        let swift = Category(id: UUID(uuidString: "8E1D3C5A-0000-4000-8000-000000000001") ?? UUID(), name: "Swift")
        let sql = Category(id: UUID(uuidString: "8E1D3C5A-0000-4000-8000-000000000002") ?? UUID(), name: "SQL")
        let author = Author(id: "ada", name: "Ada Lovelace")
        let articles = [
            Article(id: 1, title: "Structs all the way down", text: "...", author: author, categories: [swift]),
            Article(id: 2, title: "Ordered joins", text: "...", author: author, categories: [sql, swift]),
        ]
        let before = store.statistics
        try articles.saveAll(ManagedObjectContext(store: store))
        print("  saved \(articles.count) articles in \(store.statistics.since(before).statements) statements")
        try Author(id: "ada", name: "Ada King, Countess of Lovelace").save(ManagedObjectContext(store: store))
        let authors: [Author] = try Author.query(ManagedObjectContext(store: store), predicate: nil)
        print("  saving author 'ada' twice left \(authors.count) row: \(authors.map(\.name))")
        let read: [Article] = try Article.query(
            ManagedObjectContext(store: store), predicate: .key("title").contains("join", caseInsensitive: true))
        for article in read {
            print(
                "  article \(article.id) '\(article.title)' by \(article.author?.name ?? "-") in \(article.categories.map(\.name))"
            )
        }
        print("")
    }

    private func everyType() throws {
        step("Every attribute type round-trips (Car)")
        var car = Car(
            name: "Beetle", kind: .hatchback, doors: 3, mileage: 123_456_789_012, seats: 4, weight: 840.5,
            power: 25.7, registered: true, price: Decimal(string: "12345.6789") ?? 0,
            builtAt: Date(timeIntervalSince1970: -315_619_200.123456), vin: UUID(), photo: Data([0, 1, 2, 255]),
            nickname: "Herbie")
        try car.save(ManagedObjectContext(store: store))
        let loaded: [Car] = try Car.query(ManagedObjectContext(store: store), predicate: .key("name") == "Beetle")
        print("  equal after the round trip: \(loaded.first == car)")
        print("  \(loaded.first.map { "\($0.kind) \($0.price) built \($0.builtAt)" } ?? "missing")")
    }

    private func reload(_ company: Company) throws -> Company {
        let found: [Company] = try Company.query(
            ManagedObjectContext(store: store), predicate: .key("name") == company.name)
        guard let first = found.first else {
            throw CVManagedStructError.structUpdateError(message: "company \(company.name) was not found")
        }
        return first
    }
}
