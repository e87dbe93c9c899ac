@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// The context: identity map, change tracking, rollback, errors of the object API.
enum ContextSuite {
    static let cases: [SuiteCase] = [
        SuiteCase("one object per stored row per context") { make, api in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try await employee.save(ManagedObjectContext(store: store), via: api)
            let context = ManagedObjectContext(store: store)
            let fetched = try await context.fetch(FetchRequest(entityName: "Employee"), via: api)
            let again = try await context.fetch(
                FetchRequest(entityName: "Employee", predicate: .key("name") == "Ann"), via: api)
            let byID = try await context.existingObject(with: try #require(employee.objectID), via: api)
            #expect(fetched.count == 1)
            #expect(fetched[0] === again[0])
            #expect(fetched[0] === byID)
        },
        SuiteCase("insert, change, delete and rollback track changes") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            #expect(!context.hasChanges)
            let object = try context.insert(entityName: "Employee")
            #expect(context.hasChanges)
            #expect(context.insertedObjects == [object])
            context.rollback()
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
            var employee = Fixtures.employee("Ann")
            try await employee.save(context, via: api)
            let saved = try await context.existingObject(with: try #require(employee.objectID), via: api)
            try saved.setValue("Changed", forKey: "name")
            #expect(context.updatedObjects == [saved])
            try saved.setValue("Ann", forKey: "name")
            #expect(!context.hasChanges)
            try context.delete(saved)
            #expect(context.deletedObjects == [saved])
            #expect(throws: CVManagedStructError.self) { try saved.setValue("Ghost", forKey: "name") }
            context.rollback()
            #expect(!saved.isDeleted)
            #expect(try await context.fetch(FetchRequest(entityName: "Employee"), via: api).count == 1)
        },
        SuiteCase("a required attribute without a value fails the save before anything is written") { make, api in
            // Found once, by the store's resolution of the change set, before it writes anything.
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            let object = try context.insert(entityName: "Employee")
            try object.setValue("Ann", forKey: "name")
            await #expect(throws: CVManagedStructError.missingValue(entity: "Employee", key: "age")) {
                try await context.save(via: api)
            }
            #expect(store.count("apply") == 1)
            #expect(try store.fetch(FetchRequest(entityName: "Employee")).isEmpty)
            #expect(context.hasChanges)
            try object.setValue(Int16(30), forKey: "age")
            try object.setValue("Sales", forKey: "department")
            try object.setValue("Seller", forKey: "job")
            try await context.save(via: api)
            #expect(!object.objectID.isTemporary)
        },
        SuiteCase("the object API throws for unknown keys, wrong types and entities") { make, api in
            let context = ManagedObjectContext(store: try make())
            #expect(throws: CVManagedStructError.unknownEntity("Nope")) { try context.insert(entityName: "Nope") }
            let object = try context.insert(entityName: "Employee")
            #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "salary")) {
                try object.value(forKey: "salary")
            }
            #expect(throws: CVManagedStructError.self) { try object.setValue("old", forKey: "age") }
            #expect(throws: CVManagedStructError.self) { try object.object(forKey: "name") }
            #expect(throws: CVManagedStructError.self) { try object.objects(forKey: "company") }
            let car = try context.insert(entityName: "Car")
            #expect(throws: CVManagedStructError.self) { try object.setObject(car, forKey: "company") }
            let other = ManagedObjectContext(store: context.store)
            let foreign = try other.insert(entityName: "Company")
            #expect(throws: CVManagedStructError.self) { try object.setObject(foreign, forKey: "company") }
            await #expect(throws: CVManagedStructError.objectNotFound(.permanent("Employee", 999))) {
                _ = try await context.existingObject(with: .permanent("Employee", 999), via: api)
            }
        },
        SuiteCase("typed attribute access converts without loss") { make, api in
            let context = ManagedObjectContext(store: try make())
            let object = try context.insert(entityName: "Car")
            try object.setValue(3, forKey: "doors")
            #expect(try object.value(forKey: "doors") == .int32(3))
            #expect(try object.value(forKey: "doors", as: Int.self) == 3)
            #expect(try object.value(forKey: "nickname", as: String.self) == nil)
            try object.setValue(Int64(Int32.max) + 1, forKey: "mileage")
            #expect(throws: CVManagedStructError.self) { try object.value(forKey: "mileage", as: Int32.self) }
        },
        SuiteCase("permanent IDs survive encoding and find the row from another context") { make, api in
            let store = try make()
            var car = Fixtures.car()
            try await car.save(ManagedObjectContext(store: store), via: api)
            let data = try JSONEncoder().encode(try #require(car.objectID))
            let id = try JSONDecoder().decode(ManagedObjectID.self, from: data)
            let object = try await ManagedObjectContext(store: store).existingObject(with: id, via: api)
            #expect(try Car.fromObject(object) == car)
        },
    ]
}
