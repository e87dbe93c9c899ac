@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Synchronization
import LibPQ
import Testing

/// How history is stored on PostgreSQL: the tables through the migration path, tombstones of every type, what
/// recording costs a save, and the rights it needs.
@Suite struct HistoryStorageTests {
    /// The history tables come from the migration path and are checked when a store opens.
    @Test func theHistoryTablesAreMigratedAndChecked() throws {
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            try migrator.migrate(model: ExampleModel.model)
            let configuration = try PostgresStore.Configuration(url: url, schema: schema).with {
                $0.recordsHistory = true
            }
            #expect {
                _ = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            } throws: { error in
                (error as? PostgresStoreError).map {
                    $0.code == .schemaMismatch && $0.mismatches.contains { $0.contains(SchemaMapping.historyTable) }
                } ?? false
            }
            let diff = try migrator.diff(model: ExampleModel.model, recordsHistory: true)
            #expect(diff.statements.count == 3)  // two tables (the state one with its row) and the xid index
            #expect(diff.destructive.isEmpty)
            try migrator.migrate(model: ExampleModel.model, recordsHistory: true)
            let again = try migrator.diff(model: ExampleModel.model, recordsHistory: true)
            #expect(again.statements.isEmpty, "\(again.statements)")
            // A schema that has the tables serves stores without history too, and a diff without history
            // leaves them alone.
            #expect(try migrator.diff(model: ExampleModel.model).destructive.isEmpty)
            let plain = try PostgresStore(model: ExampleModel.model, configuration: try .init(url: url, schema: schema))
            defer { plain.close() }
            var eve = Employee(name: "Eve", age: 30, position: nil, department: "Sales", job: "Clerk")
            try eve.save(ManagedObjectContext(store: plain))
            let recording = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { recording.close() }
            #expect(try recording.history(after: nil, limit: 10).isEmpty)
            #expect { _ = try plain.history(after: nil, limit: 1) } throws: {
                ($0 as? CVManagedStructError)?.code == .historyUnavailable
            }
        }
    }

    /// A delete's tombstone keeps every attribute marked preserved, of every type, exactly as `MemoryStore`'s.
    @Test func tombstonesKeepEveryTypeExactly() throws {
        let entities = ExampleModel.entities.map { entity -> Entity in
            guard entity.name == "Car" else { return entity }
            var car = entity
            car.attributes = car.attributes.map {
                var attribute = $0
                attribute.preservesValueAfterDeletion = true
                return attribute
            }
            return car
        }
        let model = try ManagedObjectModel(entities)
        try HistoryTests.withHistoryStore(model: model) { store, _, _ in
            let memory = MemoryStore(model: model, recordsHistory: true)
            var stones: [[String: AttributeValue]] = []
            for target in [store as any HistoryStore, memory] {
                let context = ManagedObjectContext(store: target)
                var car = Car(
                    name: "Beetle", kind: .hatchback, doors: 3, mileage: 123_456_789_012, seats: 4, weight: 812.5,
                    power: 37.25, registered: true, price: Decimal(string: "12345.67") ?? 0,
                    builtAt: Date(timeIntervalSince1970: 1_700_000_000.25), vin: UUID(), photo: Data([0, 1, 255]),
                    nickname: nil)
                try car.save(context)
                let start = try target.currentHistoryToken()
                _ = try car.delete(context)
                try context.save()
                let history = try target.history(after: start, limit: 10)
                stones.append(history.first?.changes.first?.tombstone ?? [:])
            }
            #expect(stones[0].count == 13)
            #expect(stones[0]["photo"] == .data(Data([0, 1, 255])))
            #expect(stones[0]["nickname"] == .null)
            #expect(stones[0].filter { $0.key != "vin" } == stones[1].filter { $0.key != "vin" })
        }
    }

    /// What history costs a save, counted by the driver against the same store without history: one
    /// statement and one round trip more (the record, which carries the `COMMIT`, after the save's
    /// statements, whose results it lists); a delete whose tombstone keeps values, one more of each for
    /// reading them first.
    @Test func historyCostsASaveOneStatementAndOneRoundTrip() throws {
        try HistoryTests.withHistoryStore { store, url, schema in
            let plain = try PostgresStore(
                model: ExampleModel.model,
                configuration: try .init(url: url, schema: schema).with {
                    $0.poolSize = 1
                    if let size = TestDatabase.statementCacheSize { $0.preparedStatementCacheSize = size }
                })
            defer { plain.close() }
            for target in [plain, store] {
                try Product(id: 1, name: "one", price: 1).save(ManagedObjectContext(store: target))
            }
            let costs = try [plain, store].map { target in
                let before = target.statistics
                try Product(id: 1, name: "uno", price: 11).save(ManagedObjectContext(store: target))
                return target.statistics.since(before)
            }
            // The record, and the commit identifier, which without history goes inside the one statement.
            #expect(costs[1].statements == costs[0].statements + 2)
            #expect(costs[1].roundTrips == costs[0].roundTrips + 1)
            // Deletes, once to prepare their statements on the connection, then counted.
            let deletes = try [plain, store].map { target in
                var deleting = StoreStatistics()
                for id in Int32(2)...3 {
                    try Product(id: id, name: "p", price: 2).save(ManagedObjectContext(store: target))
                    let context = ManagedObjectContext(store: target)
                    let found: [Product] = try Product.query(context, predicate: .key("id") == id)
                    let before = target.statistics
                    try #require(found.first).delete(context)
                    try context.save()
                    deleting = target.statistics.since(before)
                }
                return deleting
            }
            #expect(deletes[1].statements == deletes[0].statements + 3)
            #expect(deletes[1].roundTrips == deletes[0].roundTrips + 2, "\(deletes)")
        }
    }

    /// Least privilege: with the GRANTs `SchemaPrinter(recordsHistory: true).grants(to:)` prints, an
    /// application role records, reads and prunes history; a read-only role reads it.
    @Test func historyWorksWithTheGrantsAlone() throws {
        try TestDatabase.withSchema { url, schema in
            try Migrator(url: url, schema: schema).migrate(model: ExampleModel.model, recordsHistory: true)
            let admin = try Connection(url)
            let suffix = UInt32.random(in: 0...UInt32.max)
            let roles = ["cv_hist_app_\(suffix)", "cv_hist_ro_\(suffix)"]
            defer {
                for role in roles {
                    try? admin.execute("DROP OWNED BY \(SQLIdentifier.quote(role))")
                    try? admin.execute("DROP ROLE IF EXISTS \(SQLIdentifier.quote(role))")
                }
                admin.close()
            }
            let printer = SchemaPrinter(model: ExampleModel.model, schema: schema, recordsHistory: true)
            for (role, readOnly) in zip(roles, [false, true]) {
                try admin.execute("CREATE ROLE \(SQLIdentifier.quote(role)) LOGIN")
                try admin.execute(printer.grants(to: role, readOnly: readOnly))
            }
            func open(_ role: String, readOnly: Bool) throws -> PostgresStore {
                try PostgresStore(
                    model: ExampleModel.model,
                    configuration: .init(
                        connection: try ConnectionConfiguration(try LeastPrivilegeTests.url(url, user: role)),
                        schema: schema
                    ).with {
                        $0.recordsHistory = true
                        $0.readOnly = readOnly
                    })
            }
            let app = try open(roles[0], readOnly: false)
            defer { app.close() }
            var eve = Employee(name: "Eve", age: 30, position: nil, department: "Sales", job: "Clerk")
            try eve.save(ManagedObjectContext(store: app))
            let context = ManagedObjectContext(store: app)
            try Product(id: 1, name: "one", price: 1).save(context)
            try Product(id: 1, name: "one", price: 1).delete(context)
            try context.save()
            let read = try app.history(after: nil, limit: 10)
            #expect(read.count == 3)
            let reader = try open(roles[1], readOnly: true)
            defer { reader.close() }
            #expect(try reader.history(after: nil, limit: 10).map(\.transactionNumber) == read.map(\.transactionNumber))
            #expect(try reader.currentHistoryToken().storeID == read.first?.token.storeID)
            #expect { _ = try reader.deleteHistory(before: try reader.currentHistoryToken()) } throws: {
                ($0 as? PostgresStoreError)?.code == .readOnlyStore
            }
            #expect(try app.deleteHistory(before: try #require(read.last).token) == 3)
        }
    }
}
