@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// `PostgresStore(readOnly: true)`, for hot standbys: fetches work, saves are refused before anything is sent.
@Suite struct ReadOnlyStoreTests {
    /// The role whose sessions refuse writes (`default_transaction_read_only`), as a standby's do.
    static let readOnlyRole = "corevalue_readonly"

    /// `url` as ``readOnlyRole``, created if missing, with the use of `schema`'s tables. A role setting rather
    /// than a startup `options` parameter, which pgbouncer refuses, so that the test also runs through
    /// pgbouncer (`make test-ha`). The role is no superuser and has no password; its grants go with the schema.
    static func standbyLikeURL(_ url: String, schema: String) throws -> String {
        let quoted = SQLIdentifier.quote(schema)
        try TestDatabase.execute(
            url,
            """
            DO $$ BEGIN
                CREATE ROLE \(readOnlyRole) LOGIN NOSUPERUSER;
                ALTER ROLE \(readOnlyRole) SET default_transaction_read_only = on;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$;
            GRANT USAGE ON SCHEMA \(quoted) TO \(readOnlyRole);
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(quoted) TO \(readOnlyRole);
            """)
        return url + (url.contains("?") ? "&" : "?") + "user=\(readOnlyRole)"
    }

    @Test func aReadOnlyStoreFetchesFromAReadOnlySessionAndRefusesSaves() throws {
        try TestDatabase.withExampleStore { writer, url, schema in
            var cars = [Car.sample("one"), Car.sample("two")]
            try cars.saveAll(ManagedObjectContext(store: writer))

            // A session that refuses writes, as a standby does; the schema check and fetches must still work.
            let standbyLike = try Self.standbyLikeURL(url, schema: schema)
            let reader = try PostgresStore(
                model: ExampleModel.model,
                configuration: try .init(url: standbyLike, schema: schema).with { $0.readOnly = true })
            defer { reader.close() }
            #expect(reader.isReadOnly)
            let context = ManagedObjectContext(store: reader)
            let read: [Car] = try Car.query(context, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "name")])
            #expect(read.map(\.name) == ["one", "two"])

            let before = reader.statistics
            var third = Car.sample("three")
            #expect {
                try third.save(context)
            } throws: { error in
                (error as? PostgresStoreError)?.code == .readOnlyStore
            }
            #expect(reader.statistics.since(before).statements == 0)
            // A struct-level save that fails takes back what it put into the context.
            #expect(!context.hasChanges)
            #expect(third.objectID == nil)
        }
    }

    @Test func theStandbyLikeSessionReallyRefusesWrites() throws {
        try TestDatabase.withExampleStore { _, url, schema in
            let standbyLike = try Self.standbyLikeURL(url, schema: schema)
            let store = try PostgresStore(
                model: ExampleModel.model, configuration: try .init(url: standbyLike, schema: schema))
            defer { store.close() }
            var car = Car.sample("refused")
            #expect {
                try car.save(ManagedObjectContext(store: store))
            } throws: { error in
                (error as? PostgresStoreError)?.sqlState == .readOnlySQLTransaction
            }
        }
    }
}
