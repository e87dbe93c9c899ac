@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// A struct-level save or delete that fails takes back what it did to the context, and only that.
enum FailedSaveSuite {
    /// A saved company with one employee: the struct, its object and the member's object.
    static func savedCompany(_ context: ManagedObjectContext) throws -> (Company, ManagedObject, ManagedObject) {
        var company = Company(name: "C", employees: [Fixtures.employee("e0")])
        try company.save(context)
        let owner = try context.existingObject(with: try #require(company.objectID))
        let member = try #require(try owner.objects(forKey: "employees").first)
        return (company, owner, member)
    }

    static let cases: [SuiteCase] = [
        SuiteCase("a retried persistent save after a failed one inserts one row") { make in
            let store = FailingStore(try make())
            let context = ManagedObjectContext(store: store)
            var employee = Fixtures.employee("Ann")
            #expect(throws: CVManagedStructError.self) { try employee.save(context) }
            #expect(employee.objectID == nil)
            #expect(!context.hasChanges)
            try employee.save(context)
            #expect(try Fixtures.count(store, "Employee") == 1)
            #expect(employee.objectID?.isTemporary == false)
        },
        SuiteCase("a failed saveAll of a nested company leaves nothing pending") { make in
            let store = FailingStore(try make())
            let context = ManagedObjectContext(store: store)
            var companies = [Company(name: "C", employees: [Fixtures.employee("e0"), Fixtures.employee("e1")])]
            #expect(throws: CVManagedStructError.self) { try companies.saveAll(context) }
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
            try companies.saveAll(context)
            #expect(try Fixtures.count(store, "Company") == 1)
            #expect(try Fixtures.count(store, "Employee") == 2)
        },
        SuiteCase("a failed save keeps the user's other pending changes") { make in
            let store = FailingStore(try make(), failures: 0)
            let context = ManagedObjectContext(store: store)
            var company = Company(name: "C", employees: [])
            try company.save(context)
            let owner = try context.existingObject(with: try #require(company.objectID))
            let pending = try context.insert(entityName: "Employee")
            try pending.setValue("Pending", forKey: "name")
            try pending.setValue(Int16(1), forKey: "age")
            try pending.setValue("D", forKey: "department")
            try pending.setValue("J", forKey: "job")
            store.failNext()
            var employee = Fixtures.employee("Ann")
            #expect(throws: CVManagedStructError.self) { try employee.save(context) }
            #expect(context.insertedObjects == [pending])
            // A failed struct save that linked a new member into an existing owner unlinks it again.
            store.failNext()
            company.employees = [Fixtures.employee("Bob")]
            #expect(throws: CVManagedStructError.self) { try company.save(context) }
            #expect(context.insertedObjects == [pending])
            #expect(try owner.objects(forKey: "employees").isEmpty)
            try context.save()
            let names = try ManagedObjectContext(store: store).fetch(FetchRequest(entityName: "Employee"))
                .map { try $0.value(forKey: "name", as: String.self) }
            #expect(names == ["Pending"])
        },
        SuiteCase("a failed update takes back the values and links it wrote") { make in
            let store = FailingStore(try make(), failures: 0)
            let context = ManagedObjectContext(store: store)
            var (company, owner, member) = try savedCompany(context)
            try Author(id: "a1", name: "Ann").save(context)
            store.failNext()
            company.name = "Renamed"
            company.employees = []
            #expect(throws: CVManagedStructError.self) { try company.save(context) }
            #expect(try owner.value(forKey: "name", as: String.self) == "C")
            #expect(try owner.objects(forKey: "employees") == [member])
            #expect(try member.object(forKey: "company") === owner)
            store.failNext()
            #expect(throws: CVManagedStructError.self) { try Author(id: "a1", name: "Changed").save(context) }
            #expect(!context.hasChanges)
            try context.save()
            let read: [Author] = try Author.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.map(\.name) == ["Ann"])
            #expect(try Fixtures.count(store, "Employee") == 1)
        },
        SuiteCase("a failed delete leaves no pending delete behind") { make in
            let store = FailingStore(try make(), failures: 0)
            let context = ManagedObjectContext(store: store)
            var (company, owner, member) = try savedCompany(context)
            store.failNext()
            #expect(throws: CVManagedStructError.self) { try company.delete(context) }
            #expect(company.objectID != nil)
            #expect(!context.hasChanges)
            #expect(!owner.isDeleted)
            #expect(try member.object(forKey: "company") === owner)
            try Author(id: "a1", name: "Ann").save(context)
            #expect(try Fixtures.count(store, "Company") == 1)
            store.failNext()
            #expect(throws: CVManagedStructError.self) { try Author(id: "a1", name: "Ann").delete(context) }
            #expect(!context.hasChanges)
            try context.save()
            #expect(try Fixtures.count(store, "Author") == 1)
        },
    ]
}
