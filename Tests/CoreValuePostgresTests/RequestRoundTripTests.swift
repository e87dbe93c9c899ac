import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// What one request costs (issue: request path), counted by the driver: a struct read by its identifier in a
/// fresh context, changed and saved. Counted once the connection ran each statement before (a long-running
/// process's steady state); the first time, a statement sent alone costs one round trip more to prepare.
@Suite struct RequestRoundTripTests {
    static func cost<T>(_ store: PostgresStore, _ body: () throws -> T) rethrows -> (T, StoreStatistics) {
        let before = store.statistics
        let value = try body()
        return (value, store.statistics.since(before))
    }

    static func readProduct(_ id: Int32, _ store: PostgresStore) throws -> Product? {
        let found: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: .key("id") == id)
        return found.first
    }

    @Test(arguments: [256, 0]) func aRequestsReadsAndSavesCountTheirRoundTrips(cache: Int) throws {
        // Through pgbouncer (make test-ha) the cache is off: both cases count the same round trips.
        let size = min(cache, TestDatabase.statementCacheSize ?? cache)
        try TestDatabase.withExampleStore(poolSize: 1, configure: { $0.preparedStatementCacheSize = size }) {
            store, _, _ in
            try [Product(id: 1, name: "one", price: 1), Product(id: 2, name: "two", price: 2)]
                .saveAll(ManagedObjectContext(store: store))
            // Warm: each statement once.
            let warming = ManagedObjectContext(store: store)
            let warm: [Product] = try Product.query(warming, predicate: .key("id") == Int32(1))
            var product = try #require(warm.first)
            product.price += 1
            try product.save(warming)
            try Product(id: 3, name: "three", price: 3).save(ManagedObjectContext(store: store))

            let (read, reading) = try Self.cost(store) { try Self.readProduct(2, store) }
            #expect(read == Product(id: 2, name: "two", price: 2))
            #expect(reading.roundTrips == 1)
            #expect(reading.statements == 1)
            #expect(reading.statementsPrepared == 0)

            // Read, changed, saved in a fresh context: the read, then BEGIN, the write and COMMIT in one
            // pipeline.
            let (_, updating) = try Self.cost(store) {
                let context = ManagedObjectContext(store: store)
                let products: [Product] = try Product.query(context, predicate: .key("id") == Int32(2))
                var found = try #require(products.first)
                found.price = 20
                try found.save(context)
            }
            #expect(updating.roundTrips == 2)
            #expect(updating.statements == 2)
            #expect(updating.transactions == 1)
            #expect(updating.statementsPrepared == 0)

            // A unique struct saved in a fresh context, new or stored: no lookup first; BEGIN, the upsert and
            // COMMIT go in one pipeline.
            let (_, inserting) = try Self.cost(store) {
                try Product(id: 4, name: "four", price: 4).save(ManagedObjectContext(store: store))
            }
            #expect(inserting.roundTrips == 1)
            #expect(inserting.statements == 1)
            #expect(try Self.readProduct(4, store) == Product(id: 4, name: "four", price: 4))
            let (_, overwriting) = try Self.cost(store) {
                try Product(id: 1, name: "uno", price: 11).save(ManagedObjectContext(store: store))
            }
            #expect(overwriting.roundTrips == 1)
            #expect(overwriting.statements == 1)
            #expect(try Self.readProduct(1, store) == Product(id: 1, name: "uno", price: 11))
            #expect(try Self.readProduct(2, store)?.price == 20)
            if size == 0 { #expect(store.statistics.statementsPrepared == 0) }
        }
    }

    @Test func aPersistentUpdateIsOneRoundTripWithItsVersionCheck() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { store, _, _ in
            var company = Company(name: "C", employees: [])
            try company.save(ManagedObjectContext(store: store))
            let id = try #require(company.objectID)
            for name in ["D", "E"] {
                let context = ManagedObjectContext(store: store)
                let companies: [Company] = try Company.query(context, predicate: .key("name") == company.name)
                var found = try #require(companies.first)
                #expect(found.objectID == id)
                found.name = name
                let (_, saving) = try Self.cost(store) { try found.save(context) }
                // The version-checked UPDATE alone, committed by its pipeline's sync (its preparation too, the first
                // time); warm the second time.
                #expect(saving.statements == 1)
                #expect(saving.roundTrips == 1)
                if name == "E" { #expect(saving.statementsPrepared == 0) }
                company = found
            }
            // A stale copy still conflicts: the check is in the statement.
            let stale = ManagedObjectContext(store: store)
            let companies: [Company] = try Company.query(stale, predicate: .key("name") == "E")
            var old = try #require(companies.first)
            var newer = old
            newer.name = "F"
            try newer.save(ManagedObjectContext(store: store))
            old.name = "G"
            // The COMMIT went with the UPDATE, which found no row at the version read: nothing was written.
            #expect(throws: CVManagedStructError.self) { try old.save(stale) }
            let now: [Company] = try Company.query(ManagedObjectContext(store: store), predicate: .key("name") == "F")
            #expect(now.count == 1)
            let overwritten: [Company] = try Company.query(
                ManagedObjectContext(store: store), predicate: .key("name") == "G")
            #expect(overwritten.isEmpty)
            // The store's one connection is idle and usable again.
            var latest = try #require(now.first)
            latest.name = "H"
            try latest.save(ManagedObjectContext(store: store))
        }
    }

    @Test func schemaChangesUnderCachedStatementsAreNeverSurfaced() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { store, url, schema in
            try Product(id: 1, name: "one", price: 1).save(ManagedObjectContext(store: store))
            var product = try #require(try Self.readProduct(1, store))
            product.price = 5
            try product.save(ManagedObjectContext(store: store))
            // Changes a migration makes under the connection's prepared statements: the server plans them again
            // (or, had a result type changed, the driver prepares them again; LibPQTests checks that path).
            let table = SQLIdentifier("Product", schema: schema).quoted
            try TestDatabase.execute(
                url,
                "ALTER TABLE \(table) ADD COLUMN note text DEFAULT 'x'; "
                    + "ALTER TABLE \(table) ALTER COLUMN name TYPE varchar(200)")
            #expect(try Self.readProduct(1, store)?.price == 5)
            product.price = 6
            try product.save(ManagedObjectContext(store: store))
            #expect(try Self.readProduct(1, store) == Product(id: 1, name: "one", price: 6))
        }
    }

    @Test func aNegativeCacheSizeIsRefused() throws {
        var configuration = try PostgresStore.Configuration(url: "postgresql://localhost/none")
        configuration.preparedStatementCacheSize = -1
        #expect {
            _ = try PostgresStore(model: try ExampleModel.make(), configuration: configuration)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .invalidConfiguration
        }
    }
}
