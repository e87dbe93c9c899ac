@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// A save that fails half-way, on a constraint violation in the last entity it writes, leaves the database as
/// it was and the context's changes pending, so fixing the value and saving again works.
@Suite struct FailedSaveTests {
    @Test func aConstraintViolationInTheLastEntityRollsBackEverythingAndKeepsTheChangesPending() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            try [Product(id: 7, name: "existing", price: 1)].saveAll(ManagedObjectContext(store: store))

            let context = ManagedObjectContext(store: store)
            try Car.sample("first entity").toObject(context)
            try Employee(name: "second", age: 40, position: nil, department: "Sales", job: "x").toObject(context)
            // A plain insert (not a unique struct's upsert) of a product id that exists: 23505 at the end.
            let product = try context.insert(entityName: "Product")
            try product.setValue(.int32(7), forKey: "id")
            try product.setValue(.string("duplicate"), forKey: "name")
            try product.setValue(.decimal(2), forKey: "price")

            #expect {
                try context.save()
            } throws: { error in
                let database = (error as? PostgresStoreError)?.databaseError
                return database?.sqlState == .uniqueViolation && database?.tableName == "Product"
            }
            let connection = try Connection(url)
            defer { connection.close() }
            func count(_ table: String) throws -> Int64 {
                try connection.query("SELECT count(*) FROM \(SQLIdentifier(table, schema: schema).quoted)")
                    .decode(Int64.self, row: 0, column: 0)
            }
            #expect(try count("Car") == 0)
            #expect(try count("Employee") == 0)
            #expect(try count("Product") == 1)
            #expect(context.hasChanges)
            #expect(context.insertedObjects.count == 3)

            try product.setValue(.int32(8), forKey: "id")
            try context.save()
            #expect(try count("Car") == 1)
            #expect(try count("Employee") == 1)
            #expect(try count("Product") == 2)
            #expect(!context.hasChanges)
        }
    }
}
