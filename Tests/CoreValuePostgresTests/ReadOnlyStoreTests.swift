@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// `PostgresStore(readOnly: true)`, for hot standbys: fetches work, saves are refused before anything is sent.
@Suite struct ReadOnlyStoreTests {
    @Test func aReadOnlyStoreFetchesFromAReadOnlySessionAndRefusesSaves() throws {
        try TestDatabase.withExampleStore { writer, url, schema in
            var cars = [Car.sample("one"), Car.sample("two")]
            try cars.saveAll(ManagedObjectContext(store: writer))

            // A session that refuses writes, as a standby does; the schema check and fetches must still work.
            let separator = url.contains("?") ? "&" : "?"
            let standbyLike = url + separator + "options=-c%20default_transaction_read_only%3Don"
            let reader = try PostgresStore(url: standbyLike, model: ExampleModel.model, schema: schema, readOnly: true)
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
            let separator = url.contains("?") ? "&" : "?"
            let standbyLike = url + separator + "options=-c%20default_transaction_read_only%3Don"
            let store = try PostgresStore(url: standbyLike, model: ExampleModel.model, schema: schema)
            defer { store.close() }
            var car = Car.sample("refused")
            #expect {
                try car.save(ManagedObjectContext(store: store))
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .readOnlySQLTransaction
            }
        }
    }
}
