import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `Store.apply` called directly with malformed change sets: both stores refuse them with the same error
/// before writing anything (the checks `ChangeSet.validate(against:)` shares).
enum StoreContractSuite {
    static let cases: [SuiteCase] = [
        SuiteCase("a malformed change set fails the same way on every store, and writes nothing") { make in
            let store = try make()
            let company = ManagedObjectID.temporary("Company")
            let employee = ManagedObjectID.temporary("Employee")
            let base = ChangeSet(inserts: [
                ObjectChange(id: company, attributes: ["name": .string("C")]),
                ObjectChange(
                    id: employee,
                    attributes: [
                        "name": .string("e"), "age": .int16(30), "department": .string("d"), "job": .string("j"),
                    ]),
            ])
            var wrongSideToOne = base
            wrongSideToOne.inserts[1].toOne = ["company": company]
            var wrongSideMembers = base
            wrongSideMembers.relationships = [
                RelationshipChange(owner: employee, relationship: "company", members: [company])
            ]
            var nonUniqueUpsertKey = base
            nonUniqueUpsertKey.inserts[0].upsertKey = "name"
            var memberTwice = base
            memberTwice.relationships = [
                RelationshipChange(owner: company, relationship: "employees", members: [employee, employee])
            ]
            var lossyValue = base
            lossyValue.inserts[1].attributes["age"] = .int64(70_000)
            let expected: [(ChangeSet, CVManagedStructError)] = [
                (
                    wrongSideToOne,
                    .constraintViolation(
                        entity: "Employee", key: "company", message: "not an owned to-one relationship")
                ),
                (
                    wrongSideMembers,
                    .constraintViolation(
                        entity: "Employee", key: "company", message: "not an owned to-many relationship")
                ),
                (
                    nonUniqueUpsertKey,
                    .constraintViolation(
                        entity: "Company", key: "name", message: "upsert key is not a unique attribute")
                ),
                (
                    memberTwice,
                    .constraintViolation(
                        entity: "Company", key: "employees", message: "\(employee) is listed twice")
                ),
                (lossyValue, .typeMismatch(entity: "Employee", key: "age", expected: "int16", found: "int64")),
            ]
            for (changes, error) in expected {
                #expect(throws: error) { try store.apply(changes) }
            }
            #expect(try store.fetch(FetchRequest(entityName: "Company")).isEmpty)
            #expect(try store.fetch(FetchRequest(entityName: "Employee")).isEmpty)
            // The well-formed base applies.
            let result = try store.apply(base)
            #expect(result.permanentIDs.count == 2)
        }
    ]
}
