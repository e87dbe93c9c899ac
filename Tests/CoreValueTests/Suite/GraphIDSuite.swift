@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// After a save, every persistent struct of the saved graph carries its `objectID`, so saving the value
/// again, or a changed copy, updates rows and never inserts duplicates (seed issue #19's class of bug).
enum GraphIDSuite {
    static let cases: [SuiteCase] = [savedTwice, savedAllTwice]

    static let savedTwice = SuiteCase("a company with three new employees saved twice, then changed, keeps three rows")
    {
        make, api in
        let store = try make()
        let context = ManagedObjectContext(store: store)
        var company = Company(
            name: "Acme", employees: ["Ann", "Bob", "Cy"].map { Fixtures.employee($0) })
        try await company.save(context, via: api)
        #expect(company.objectID != nil)
        #expect(company.employees.allSatisfy { $0.objectID != nil })
        try await company.save(context, via: api)
        company.employees[1].age = 50
        company.employees.reverse()
        try await company.save(ManagedObjectContext(store: store), via: api)
        #expect(try Fixtures.count(store, "Employee") == 3)
        #expect(try Fixtures.count(store, "Company") == 1)
        let reader = ManagedObjectContext(store: store)
        let read = try Company.fromObject(
            try await reader.existingObject(with: try #require(company.objectID), via: api))
        #expect(read.employees.map(\.name) == ["Cy", "Bob", "Ann"])
        #expect(read.employees.map(\.age) == [30, 50, 30])
    }

    static let savedAllTwice = SuiteCase("saveAll of companies writes every nested objectID back") { make, api in
        let store = try make()
        var companies = (1...2).map { number in
            Company(name: "C\(number)", employees: (1...3).map { Fixtures.employee("E\(number)\($0)") })
        }
        try await companies.saveAll(ManagedObjectContext(store: store), via: api)
        #expect(companies.allSatisfy { $0.objectID != nil && $0.employees.allSatisfy { $0.objectID != nil } })
        try await companies.saveAll(ManagedObjectContext(store: store), via: api)
        companies[0].employees[0].name = "Renamed"
        try await companies.saveAll(ManagedObjectContext(store: store), via: api)
        #expect(try Fixtures.count(store, "Employee") == 6)
        #expect(try Fixtures.count(store, "Company") == 2)
    }
}
