@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// A struct-level save or delete that fails takes back what it did to the context, and only that.
enum FailedSaveSuite {
    /// A saved company with one employee: the struct, its object and the member's object.
    static func savedCompany(_ context: ManagedObjectContext, via api: APIMode) async throws
        -> (Company, ManagedObject, ManagedObject)
    {
        var company = Company(name: "C", employees: [Fixtures.employee("e0")])
        try await company.save(context, via: api)
        let owner = try await context.existingObject(with: try #require(company.objectID), via: api)
        let member = try #require(try owner.objects(forKey: "employees").first)
        return (company, owner, member)
    }

    static let cases: [SuiteCase] = [
        SuiteCase("a retried persistent save after a failed one inserts one row") { make, api in
            let store = FailingStore(try make())
            let context = ManagedObjectContext(store: store)
            var employee = Fixtures.employee("Ann")
            await #expect(throws: CVManagedStructError.self) { try await employee.save(context, via: api) }
            #expect(employee.objectID == nil)
            #expect(!context.hasChanges)
            try await employee.save(context, via: api)
            #expect(try Fixtures.count(store, "Employee") == 1)
            #expect(employee.objectID?.isTemporary == false)
        },
        SuiteCase("a failed saveAll of a nested company leaves nothing pending") { make, api in
            let store = FailingStore(try make())
            let context = ManagedObjectContext(store: store)
            var companies = [Company(name: "C", employees: [Fixtures.employee("e0"), Fixtures.employee("e1")])]
            await #expect(throws: CVManagedStructError.self) { try await companies.saveAll(context, via: api) }
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
            try await companies.saveAll(context, via: api)
            #expect(try Fixtures.count(store, "Company") == 1)
            #expect(try Fixtures.count(store, "Employee") == 2)
        },
        SuiteCase("a failed save keeps the user's other pending changes") { make, api in
            let store = FailingStore(try make(), failures: 0)
            let context = ManagedObjectContext(store: store)
            var company = Company(name: "C", employees: [])
            try await company.save(context, via: api)
            let owner = try await context.existingObject(with: try #require(company.objectID), via: api)
            let pending = try context.insert(entityName: "Employee")
            try pending.setValue("Pending", forKey: "name")
            try pending.setValue(Int16(1), forKey: "age")
            try pending.setValue("D", forKey: "department")
            try pending.setValue("J", forKey: "job")
            store.failNext()
            var employee = Fixtures.employee("Ann")
            await #expect(throws: CVManagedStructError.self) { try await employee.save(context, via: api) }
            #expect(context.insertedObjects == [pending])
            // A failed struct save that linked a new member into an existing owner unlinks it again.
            store.failNext()
            company.employees = [Fixtures.employee("Bob")]
            await #expect(throws: CVManagedStructError.self) { try await company.save(context, via: api) }
            #expect(context.insertedObjects == [pending])
            #expect(try owner.objects(forKey: "employees").isEmpty)
            try await context.save(via: api)
            let names = try await ManagedObjectContext(store: store).fetch(
                FetchRequest(entityName: "Employee"), via: api
            )
            .map { try $0.value(forKey: "name", as: String.self) }
            #expect(names == ["Pending"])
        },
        SuiteCase("a failed update takes back the values and links it wrote") { make, api in
            let store = FailingStore(try make(), failures: 0)
            let context = ManagedObjectContext(store: store)
            var (company, owner, member) = try await savedCompany(context, via: api)
            try await Author(id: "a1", name: "Ann").save(context, via: api)
            store.failNext()
            company.name = "Renamed"
            company.employees = []
            await #expect(throws: CVManagedStructError.self) { try await company.save(context, via: api) }
            #expect(try owner.value(forKey: "name", as: String.self) == "C")
            #expect(try owner.objects(forKey: "employees") == [member])
            #expect(try member.object(forKey: "company") === owner)
            store.failNext()
            await #expect(throws: CVManagedStructError.self) {
                try await Author(id: "a1", name: "Changed").save(context, via: api)
            }
            #expect(!context.hasChanges)
            try await context.save(via: api)
            let read: [Author] = try await Author.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.map(\.name) == ["Ann"])
            #expect(try Fixtures.count(store, "Employee") == 1)
        },
        SuiteCase("a failed delete leaves no pending delete behind") { make, api in
            let store = FailingStore(try make(), failures: 0)
            let context = ManagedObjectContext(store: store)
            var (company, owner, member) = try await savedCompany(context, via: api)
            store.failNext()
            await #expect(throws: CVManagedStructError.self) { try await company.delete(context, via: api) }
            #expect(company.objectID != nil)
            #expect(!context.hasChanges)
            #expect(!owner.isDeleted)
            #expect(try member.object(forKey: "company") === owner)
            try await Author(id: "a1", name: "Ann").save(context, via: api)
            #expect(try Fixtures.count(store, "Company") == 1)
            store.failNext()
            await #expect(throws: CVManagedStructError.self) {
                try await Author(id: "a1", name: "Ann").delete(context, via: api)
            }
            #expect(!context.hasChanges)
            try await context.save(via: api)
            #expect(try Fixtures.count(store, "Author") == 1)
        },
    ]
}
