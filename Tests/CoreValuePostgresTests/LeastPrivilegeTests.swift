@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// Least privilege (issue 33, point 2): the schema is migrated by its owner; an application role with only
/// `SchemaPrinter.grants(to:)` (schema usage, DML on the tables, sequence usage) saves, upserts, loads in
/// bulk through COPY, listens and deletes; a read-only role reads; a missing right is a typed error naming
/// the right and the object.
@Suite struct LeastPrivilegeTests {
    /// `url` with another user (trust authentication on the test cluster).
    static func url(_ url: String, user: String) throws -> String {
        let at = try #require(url.range(of: "@"), "a URL with a user: \(url)")
        let scheme = try #require(url.range(of: "://"))
        return String(url[..<scheme.upperBound]) + user + String(url[at.lowerBound...])
    }

    /// Makes a login role for the test with `grants`, runs `body` with a store opened as it, and drops it.
    static func asRole(
        _ schema: TestSchema, readOnly: Bool, log: LockedList<String> = LockedList<String>(),
        _ body: (PostgresStore, _ role: String, _ admin: Connection) throws -> Void
    ) throws {
        let role = "cv_\(readOnly ? "ro" : "app")_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try Connection(schema.url)
        defer {
            try? admin.execute("DROP OWNED BY \(SQLIdentifier.quote(role))")
            try? admin.execute("DROP ROLE IF EXISTS \(SQLIdentifier.quote(role))")
            admin.close()
        }
        try admin.execute("CREATE ROLE \(SQLIdentifier.quote(role)) LOGIN")
        try admin.execute(
            SchemaPrinter(model: ExampleModel.model, schema: schema.name).grants(to: role, readOnly: readOnly))
        var configuration = PostgresStore.Configuration(
            connection: try ConnectionConfiguration(try url(schema.url, user: role)), schema: schema.name)
        configuration.notificationChannel = "cv_\(schema.name)"
        configuration.readOnly = readOnly
        configuration.onEvent = { event in
            if event.kind == .statement, let sql = event.sql { log.append(sql) }
        }
        // Opening checks the schema against the model through the catalog, as this role.
        let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
        defer { store.close() }
        try body(store, role, admin)
    }

    @Test func anApplicationRoleWithTheGrantsDoesEverythingButChangeTheSchema() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try TestSchema.with(model: ExampleModel.model) { schema in
            let log = LockedList<String>()
            try Self.asRole(schema, readOnly: false, log: log) { store, role, admin in
                let listener = try store.makeChangeListener()
                defer { listener.close() }
                var company = Company(
                    name: "Acme",
                    employees: [Employee(name: "Ann", age: 30, position: nil, department: "D", job: "J")])
                try company.save(ManagedObjectContext(store: store))
                // Unique structs: upserts, and a bulk load of new rows (COPY, keys from the identity sequence).
                try (1...3_000).map { Product(id: Int32($0), name: "p\($0)", price: Decimal($0)) }
                    .saveAll(ManagedObjectContext(store: store))
                #expect(log.all.contains { $0.hasPrefix("COPY") })
                try [Product(id: 1, name: "one", price: 1)].saveAll(ManagedObjectContext(store: store))
                let context = ManagedObjectContext(store: store)
                #expect(try Product.count(context, predicate: nil) == 3_000)
                _ = try context.batchUpdate(BatchUpdateRequest(entityName: "Product", values: ["price": .decimal(2)]))
                _ = try context.batchDelete(
                    BatchDeleteRequest(entityName: "Product", predicate: .key("id") > Int32(10)))
                try company.delete(ManagedObjectContext(store: store))
                var heard = 0
                for _ in 0..<50 where heard == 0 { heard = try listener.next(timeout: .milliseconds(100)).count }
                #expect(heard > 0)
                // No schema changes: the migrator as this role is refused, named.
                let migrator = Migrator(
                    configuration: try ConnectionConfiguration(try Self.url(schema.url, user: role)),
                    schema: schema.name)
                let error = #expect(throws: PostgresStoreError.self) {
                    _ = try migrator.migrate(
                        model: try ManagedObjectModel {
                            Entity("Extra") { Attribute("name", .string) }
                        })
                }
                #expect(error?.code == .permissionDenied, "\(String(describing: error))")
                // A right taken away is named with its object.
                try admin.execute(
                    "REVOKE INSERT ON TABLE \(SQLIdentifier("Product", schema: schema.name).quoted) FROM \(SQLIdentifier.quote(role))"
                )
                let denied = #expect(throws: PostgresStoreError.self) {
                    try Product(id: 9_999, name: "new", price: 1).save(ManagedObjectContext(store: store))
                }
                #expect(denied?.code == .permissionDenied)
                #expect(denied?.message.contains("INSERT") == true, "\(String(describing: denied))")
                #expect(denied?.message.contains("Product") == true, "\(String(describing: denied))")
                #expect(denied?.sqlState == .insufficientPrivilege)
            }
        }
    }

    @Test func aReadOnlyRoleReadsAndIsRefusedWrites() throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try TestSchema.with(model: ExampleModel.model) { schema in
            try [Product(id: 1, name: "one", price: 1)].saveAll(ManagedObjectContext(store: schema.store))
            try Self.asRole(schema, readOnly: true) { store, _, _ in
                let found: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: nil)
                #expect(found.map(\.id) == [1])
                let sum = try Product.aggregate(ManagedObjectContext(store: store), .sum(\.price))
                #expect(sum == 1)
            }
        }
    }

    /// `corevalue grant` prints the same script, for the example model or an Xcode one.
    @Test func theToolPrintsTheGrants() throws {
        let run = try CommandLineTests.run(["grant", "--role", "app", "--schema", "s"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output == SchemaPrinter(model: ExampleModel.model, schema: "s").grants(to: "app"))
        let readOnly = try CommandLineTests.run(["grant", "--role", "ro", "--read-only", "--schema", "s"])
        #expect(
            readOnly.output == SchemaPrinter(model: ExampleModel.model, schema: "s").grants(to: "ro", readOnly: true))
        #expect(try CommandLineTests.run(["grant"]).status == 2)
    }

    @Test func theGrantsNameEveryTableAndNothingElse() {
        let grants = SchemaPrinter(model: ExampleModel.model, schema: "s").grants(to: "app")
        #expect(grants.hasPrefix(#"GRANT USAGE ON SCHEMA "s" TO "app";"#))
        #expect(grants.contains(#"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "s"."Employee", "#))
        #expect(grants.contains(#"GRANT USAGE ON ALL SEQUENCES IN SCHEMA "s" TO "app";"#))
        let readOnly = SchemaPrinter(model: ExampleModel.model, schema: "s").grants(to: "ro", readOnly: true)
        #expect(readOnly.contains(#"GRANT SELECT ON TABLE "s"."Employee", "#))
        #expect(!readOnly.contains("INSERT") && !readOnly.contains("SEQUENCES"))
    }
}
