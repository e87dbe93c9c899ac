import CoreValue
import CoreValueExamples
import Foundation
import Synchronization
import Testing

/// A persistent struct's save learns the IDs of the structs nested in it by reading the saved object back
/// and comparing that with what it boxed: the struct itself is boxed once, for the save, not again for the
/// comparison.
@Suite struct AdoptSavedIDsTests {
    static let reads = Atomic<Int>(0)

    /// A name whose raw value counts how often boxing reads it.
    struct CountedName: RawRepresentable, Hashable, Sendable, Boxing, Unboxing {
        typealias StructureType = CountedName
        let stored: String
        init(rawValue: String) { stored = rawValue }
        var rawValue: String {
            AdoptSavedIDsTests.reads.add(1, ordering: .relaxed)
            return stored
        }
    }

    /// `Company`, its name counted.
    struct CountedCompany: CVManagedPersistentStruct {
        static let EntityName = "Company"
        var objectID: ManagedObjectID?
        var name: CountedName
        var employees: [Employee]
        static func fromObject(_ o: ManagedObject) throws -> CountedCompany {
            try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <|| "employees"
        }
    }

    @Test func aNestedStructGetsItsIDAndTheStructIsBoxedOnceForTheSave() throws {
        let store = MemoryStore(model: ExampleModel.model)
        var company = CountedCompany(
            objectID: nil, name: CountedName(rawValue: "C"),
            employees: [Employee(name: "e", age: 30, position: nil, department: "d", job: "j")])
        let before = Self.reads.load(ordering: .relaxed)
        try company.save(ManagedObjectContext(store: store))
        // Once for the save, once for the struct read back (compared with the first): not a third time.
        #expect(Self.reads.load(ordering: .relaxed) - before == 2)
        #expect(company.objectID != nil)
        #expect(company.employees.first?.objectID != nil)

        var companies = [company, CountedCompany(objectID: nil, name: CountedName(rawValue: "D"), employees: [])]
        companies[0].name = CountedName(rawValue: "C2")
        let again = Self.reads.load(ordering: .relaxed)
        try companies.saveAll(ManagedObjectContext(store: store))
        #expect(Self.reads.load(ordering: .relaxed) - again == 4)
        #expect(companies.allSatisfy { $0.objectID != nil })
        #expect(companies[0].employees.first?.objectID == company.employees.first?.objectID)
    }
}
