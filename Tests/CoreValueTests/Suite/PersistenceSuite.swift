@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Persistent structs: saves, updates, deletes, nested rows reused, stale IDs.
enum PersistenceSuite {
    /// Saves `staff` employees (writing their objectIDs back), then a company listing them in order.
    static func savedCompany(staff: Int, _ context: ManagedObjectContext, via api: APIMode) async throws
        -> (Company, [Employee])
    {
        var employees = (1...staff).map { Fixtures.employee("E\($0)") }
        try await employees.saveAll(context, via: api)
        var company = Company(name: "Acme", employees: employees)
        try await company.save(context, via: api)
        return (company, employees)
    }

    static let cases: [SuiteCase] = [
        SuiteCase("a struct read from a pending object updates its row after the context saved") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            let object = try await Fixtures.employee("Ann").toObject(context, via: api)
            let temporary = object.objectID
            var fetched = try #require(
                (try await Employee.query(context, predicate: nil, via: api) as [Employee]).first)
            #expect(fetched.objectID == temporary)
            try await context.save(via: api)
            #expect(context.registeredObject(for: temporary) === object)
            #expect(try await context.existingObject(with: temporary, via: api) === object)
            fetched.name = "Bob"
            try await fetched.save(context, via: api)
            #expect(fetched.objectID == object.objectID)
            #expect(fetched.objectID?.isTemporary == false)
            let read: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.map(\.name) == ["Bob"])
        },
        SuiteCase("a struct read from an ephemeral object has no objectID and inserts") { make, api in
            let store = try make()
            var employee = try Employee.fromObject(try await Fixtures.employee("Eve").toObject(nil, via: api))
            #expect(employee.objectID == nil)
            try await employee.save(ManagedObjectContext(store: store), via: api)
            #expect(employee.objectID?.isTemporary == false)
            #expect(try Fixtures.count(store, "Employee") == 1)
        },
        SuiteCase("save writes objectID back and an update changes the same row") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var employee = Fixtures.employee("Ann")
            try await employee.save(context, via: api)
            let id = try #require(employee.objectID)
            #expect(!id.isTemporary)
            employee.age = 41
            try await employee.save(context, via: api)
            #expect(employee.objectID == id)
            let read: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read == [employee])
        },
        SuiteCase("an update from another context finds the row by objectID") { make, api in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try await employee.save(ManagedObjectContext(store: store), via: api)
            employee.job = "Manager"
            try await employee.save(ManagedObjectContext(store: store), via: api)
            let read: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.map(\.job) == ["Manager"])
        },
        SuiteCase("delete removes the row and clears objectID") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var employee = Fixtures.employee("Ann")
            #expect(try await employee.delete(context, via: api) == false)
            try await employee.save(context, via: api)
            #expect(try await employee.delete(context, via: api) == true)
            #expect(employee.objectID == nil)
            #expect(try Fixtures.count(store, "Employee") == 0)
            #expect(try await employee.delete(nil, via: api) == false)
        },
        SuiteCase("deleting a row that is gone throws structDeleteError") { make, api in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try await employee.save(ManagedObjectContext(store: store), via: api)
            var copy = employee
            try await copy.delete(ManagedObjectContext(store: store), via: api)
            await #expect {
                try await employee.delete(ManagedObjectContext(store: store), via: api)
            } throws: { error in
                isStructError(error) { if case .structDeleteError = $0 { true } else { false } }
            }
        },
        SuiteCase("a stale objectID throws structUpdateError and never inserts") { make, api in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try await employee.save(ManagedObjectContext(store: store), via: api)
            var doomed = employee
            try await doomed.delete(ManagedObjectContext(store: store), via: api)
            let context = ManagedObjectContext(store: store)
            await #expect {
                try await employee.save(context, via: api)
            } throws: { error in
                isStructError(error) { if case .structUpdateError = $0 { true } else { false } }
            }
            #expect(!context.hasChanges)
            #expect(try Fixtures.count(store, "Employee") == 0)
        },
        SuiteCase("nested persistent structs reuse their rows (seed issue #19)") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var (company, employees) = try await savedCompany(staff: 3, context, via: api)
            #expect(employees.allSatisfy { $0.objectID != nil })
            try await company.save(ManagedObjectContext(store: store), via: api)
            #expect(try Fixtures.count(store, "Employee") == 3)
            #expect(try Fixtures.count(store, "Company") == 1)
        },
        SuiteCase("an ordered to-many keeps array order and reorders persist") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var (company, employees) = try await savedCompany(staff: 5, context, via: api)
            company.employees = [employees[4], employees[0], employees[3], employees[1], employees[2]]
            try await company.save(ManagedObjectContext(store: store), via: api)
            let read: [Company] = try await Company.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.employees.map(\.name) == ["E5", "E1", "E4", "E2", "E3"])
        },
        SuiteCase("nested collections shrink to three and to zero, unlinking without deleting") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var (company, employees) = try await savedCompany(staff: 5, context, via: api)
            company.employees = Array(employees.prefix(3))
            try await company.save(context, via: api)
            var read: [Company] = try await Company.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.employees.map(\.name) == ["E1", "E2", "E3"])
            company.employees = []
            try await company.save(context, via: api)
            read = try await Company.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.employees == [])
            #expect(try Fixtures.count(store, "Employee") == 5)
        },
        SuiteCase("saveAll writes every objectID back with one apply") { make, api in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            var cars = (1...20).map { Fixtures.car("Car \($0)") }
            try await cars.saveAll(context, via: api)
            #expect(store.count("apply") == 1)
            #expect(Set(cars.compactMap(\.objectID)).count == 20)
        },
        SuiteCase("a save that conflicts leaves the changes pending") { make, api in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try await employee.save(ManagedObjectContext(store: store), via: api)
            let first = ManagedObjectContext(store: store)
            let second = ManagedObjectContext(store: store)
            let id = try #require(employee.objectID)
            let mine = try await first.existingObject(with: id, via: api)
            let theirs = try await second.existingObject(with: id, via: api)
            try mine.setValue("Mine", forKey: "job")
            try theirs.setValue("Theirs", forKey: "job")
            try await second.save(via: api)
            await #expect {
                try await first.save(via: api)
            } throws: { error in
                isStructError(error) { $0.code == .conflict && $0.entity == "Employee" }
            }
            #expect(first.hasChanges)
            #expect(try mine.value(forKey: "job") == .string("Mine"))
            first.rollback()
            #expect(!first.hasChanges)
            let read: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.map(\.job) == ["Theirs"])
        },
    ]
}
