@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Persistent structs: saves, updates, deletes, nested rows reused, stale IDs.
enum PersistenceSuite {
    /// Saves `staff` employees (writing their objectIDs back), then a company listing them in order.
    static func savedCompany(staff: Int, _ context: ManagedObjectContext) throws -> (Company, [Employee]) {
        var employees = (1...staff).map { Fixtures.employee("E\($0)") }
        try employees.saveAll(context)
        var company = Company(name: "Acme", employees: employees)
        try company.save(context)
        return (company, employees)
    }

    static let cases: [SuiteCase] = [
        SuiteCase("a struct read from a pending object updates its row after the context saved") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            let object = try Fixtures.employee("Ann").toObject(context)
            let temporary = object.objectID
            var fetched = try #require((try Employee.query(context, predicate: nil) as [Employee]).first)
            #expect(fetched.objectID == temporary)
            try context.save()
            #expect(context.registeredObject(for: temporary) === object)
            #expect(try context.existingObject(with: temporary) === object)
            fetched.name = "Bob"
            try fetched.save(context)
            #expect(fetched.objectID == object.objectID)
            #expect(fetched.objectID?.isTemporary == false)
            let read: [Employee] = try Employee.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.map(\.name) == ["Bob"])
        },
        SuiteCase("a struct read from an ephemeral object has no objectID and inserts") { make in
            let store = try make()
            var employee = try Employee.fromObject(try Fixtures.employee("Eve").toObject(nil))
            #expect(employee.objectID == nil)
            try employee.save(ManagedObjectContext(store: store))
            #expect(employee.objectID?.isTemporary == false)
            #expect(try Fixtures.count(store, "Employee") == 1)
        },
        SuiteCase("save writes objectID back and an update changes the same row") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var employee = Fixtures.employee("Ann")
            try employee.save(context)
            let id = try #require(employee.objectID)
            #expect(!id.isTemporary)
            employee.age = 41
            try employee.save(context)
            #expect(employee.objectID == id)
            let read: [Employee] = try Employee.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read == [employee])
        },
        SuiteCase("an update from another context finds the row by objectID") { make in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try employee.save(ManagedObjectContext(store: store))
            employee.job = "Manager"
            try employee.save(ManagedObjectContext(store: store))
            let read: [Employee] = try Employee.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.map(\.job) == ["Manager"])
        },
        SuiteCase("delete removes the row and clears objectID") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var employee = Fixtures.employee("Ann")
            #expect(try employee.delete(context) == false)
            try employee.save(context)
            #expect(try employee.delete(context) == true)
            #expect(employee.objectID == nil)
            #expect(try Fixtures.count(store, "Employee") == 0)
            #expect(try employee.delete(nil) == false)
        },
        SuiteCase("deleting a row that is gone throws structDeleteError") { make in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try employee.save(ManagedObjectContext(store: store))
            var copy = employee
            try copy.delete(ManagedObjectContext(store: store))
            #expect {
                try employee.delete(ManagedObjectContext(store: store))
            } throws: { error in
                isStructError(error) { if case .structDeleteError = $0 { true } else { false } }
            }
        },
        SuiteCase("a stale objectID throws structUpdateError and never inserts") { make in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try employee.save(ManagedObjectContext(store: store))
            var doomed = employee
            try doomed.delete(ManagedObjectContext(store: store))
            let context = ManagedObjectContext(store: store)
            #expect {
                try employee.save(context)
            } throws: { error in
                isStructError(error) { if case .structUpdateError = $0 { true } else { false } }
            }
            #expect(!context.hasChanges)
            #expect(try Fixtures.count(store, "Employee") == 0)
        },
        SuiteCase("nested persistent structs reuse their rows (seed issue #19)") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var (company, employees) = try savedCompany(staff: 3, context)
            #expect(employees.allSatisfy { $0.objectID != nil })
            try company.save(ManagedObjectContext(store: store))
            #expect(try Fixtures.count(store, "Employee") == 3)
            #expect(try Fixtures.count(store, "Company") == 1)
        },
        SuiteCase("an ordered to-many keeps array order and reorders persist") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var (company, employees) = try savedCompany(staff: 5, context)
            company.employees = [employees[4], employees[0], employees[3], employees[1], employees[2]]
            try company.save(ManagedObjectContext(store: store))
            let read: [Company] = try Company.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.first?.employees.map(\.name) == ["E5", "E1", "E4", "E2", "E3"])
        },
        SuiteCase("nested collections shrink to three and to zero, unlinking without deleting") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var (company, employees) = try savedCompany(staff: 5, context)
            company.employees = Array(employees.prefix(3))
            try company.save(context)
            var read: [Company] = try Company.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.first?.employees.map(\.name) == ["E1", "E2", "E3"])
            company.employees = []
            try company.save(context)
            read = try Company.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.first?.employees == [])
            #expect(try Fixtures.count(store, "Employee") == 5)
        },
        SuiteCase("saveAll writes every objectID back with one apply") { make in
            let store = CountingStore(try make())
            let context = ManagedObjectContext(store: store)
            var cars = (1...20).map { Fixtures.car("Car \($0)") }
            try cars.saveAll(context)
            #expect(store.count("apply") == 1)
            #expect(Set(cars.compactMap(\.objectID)).count == 20)
        },
        SuiteCase("a save that conflicts leaves the changes pending") { make in
            let store = try make()
            var employee = Fixtures.employee("Ann")
            try employee.save(ManagedObjectContext(store: store))
            let first = ManagedObjectContext(store: store)
            let second = ManagedObjectContext(store: store)
            let id = try #require(employee.objectID)
            let mine = try first.existingObject(with: id)
            let theirs = try second.existingObject(with: id)
            try mine.setValue("Mine", forKey: "job")
            try theirs.setValue("Theirs", forKey: "job")
            try second.save()
            #expect {
                try first.save()
            } throws: { error in
                isStructError(error) { $0.code == .conflict && $0.entity == "Employee" }
            }
            #expect(first.hasChanges)
            #expect(try mine.value(forKey: "job") == .string("Mine"))
            first.rollback()
            #expect(!first.hasChanges)
            let read: [Employee] = try Employee.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.map(\.job) == ["Theirs"])
        },
    ]
}
