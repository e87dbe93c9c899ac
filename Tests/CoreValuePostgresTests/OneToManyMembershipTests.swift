@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// A member of a one-to-many relationship belongs to one owner at most: the join table carries
/// `UNIQUE (member) DEFERRABLE INITIALLY DEFERRED`, so two transactions that each link the same employee to a
/// different company cannot both commit, and a save may still move members in any statement order.
@Suite struct OneToManyMembershipTests {
    @Test func theDatabaseRefusesAMemberInTwoOwnersAtCommit() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            var companies = [Company(name: "C", employees: []), Company(name: "D", employees: [])]
            try companies.saveAll(ManagedObjectContext(store: store))
            var employee = Employee(name: "e0", age: 30, position: nil, department: "Sales", job: "x")
            try employee.save(ManagedObjectContext(store: store))
            let keys = try [companies[0].objectID, companies[1].objectID, employee.objectID].map {
                try #require($0?.primaryKey)
            }
            let table = SQLIdentifier("Company_employees", schema: schema).quoted
            let connection = try Connection(url)
            defer { connection.close() }
            // Both links inside one transaction: accepted statement by statement (deferred), refused at COMMIT.
            try connection.execute("BEGIN")
            try connection.execute("INSERT INTO \(table) VALUES (\(keys[0]), \(keys[2]), 0)")
            try connection.execute("INSERT INTO \(table) VALUES (\(keys[1]), \(keys[2]), 0)")
            #expect {
                try connection.execute("COMMIT")
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .uniqueViolation
            }
            let count = try connection.query("SELECT count(*) FROM \(table)").decode(Int64.self, row: 0, column: 0)
            #expect(count == 0)
        }
    }

    @Test func movingMembersBetweenOwnersInOneSaveStillWorks() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let staff = (0..<4).map { Employee(name: "e\($0)", age: 30, position: nil, department: "Sales", job: "x") }
            var first = Company(name: "First", employees: staff)
            try first.save(ManagedObjectContext(store: store))
            let context = ManagedObjectContext(store: store)
            let loaded: [Company] = try Company.query(context, predicate: .key("name") == "First")
            var source = try #require(loaded.first)
            let target = Company(name: "Second", employees: Array(source.employees.suffix(2)))
            source.employees = Array(source.employees.prefix(2))
            try target.toObject(context)
            try source.toObject(context)
            try context.save()
            let after: [Company] = try Company.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "name")])
            #expect(after.map { $0.employees.map(\.name) } == [["e0", "e1"], ["e2", "e3"]])
        }
    }

    @Test func openingAStoreReportsAMissingMemberConstraint() throws {
        try TestDatabase.withExampleStore { _, url, schema in
            let table = SQLIdentifier("Company_employees", schema: schema).quoted
            try TestDatabase.execute(url, "ALTER TABLE \(table) DROP CONSTRAINT \"Company_employees_member_key\"")
            #expect {
                try PostgresStore(model: ExampleModel.model, configuration: try .init(url: url, schema: schema))
            } throws: { error in
                (error as? PostgresStoreError)?.mismatches.contains { $0.contains(#"UNIQUE ("member")"#) } == true
            }
        }
    }
}
