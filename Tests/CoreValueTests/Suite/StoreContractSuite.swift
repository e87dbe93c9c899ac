@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `Store.apply` called directly with malformed change sets: both stores refuse them with the same error
/// before writing anything (the checks `ChangeSet.resolved(against:rules:)` makes for both).
enum StoreContractSuite {
    static let cases: [SuiteCase] = [
        SuiteCase("a malformed change set fails the same way on every store, and writes nothing") { make, api in
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
            var toManyAsToOne = base
            toManyAsToOne.inserts[0].toOne = ["employees": employee]
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
            var unknownKey = base
            unknownKey.inserts[0].attributes["nope"] = .string("x")
            var nullRequired = base
            nullRequired.inserts[1].attributes["department"] = .null
            var missingRequired = base
            missingRequired.inserts[1].attributes = ["name": .string("e"), "age": .int16(30), "job": .string("j")]
            var wrongDestination = base
            wrongDestination.inserts[1].toOne = ["company": employee]
            var unknownRelationship = base
            unknownRelationship.inserts[1].toOne = ["nope": company]
            var storedIDInserted = base
            storedIDInserted.inserts[0].id = .permanent("Company", 1)
            var unknownEntity = base
            unknownEntity.inserts.append(ObjectChange(id: .temporary("Nope"), attributes: [:]))
            let expected: [(ChangeSet, CVManagedStructError)] = [
                (
                    toManyAsToOne,
                    .constraintViolation(entity: "Company", key: "employees", message: "not a to-one relationship")
                ),
                (
                    wrongSideMembers,
                    .constraintViolation(entity: "Employee", key: "company", message: "not a to-many relationship")
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
                (unknownKey, .unknownKey(entity: "Company", key: "nope")),
                (nullRequired, .missingValue(entity: "Employee", key: "department")),
                (missingRequired, .missingValue(entity: "Employee", key: "department")),
                (
                    wrongDestination,
                    .typeMismatch(entity: "Employee", key: "company", expected: "Company", found: "Employee")
                ),
                (unknownRelationship, .unknownKey(entity: "Employee", key: "nope")),
                (
                    storedIDInserted,
                    .invalidObject(message: "insert of Company/1, which is already stored")
                ),
                (unknownEntity, .unknownEntity("Nope")),
            ]
            for (changes, error) in expected {
                #expect(throws: error) { try store.apply(changes) }
            }
            // Not a conflict (which a caller might retry): a change that cannot be right.
            #expect(throws: CVManagedStructError.invalidObject(message: "update of \(company), which was never saved"))
            {
                try store.apply(
                    ChangeSet(updates: [ObjectChange(id: company, version: 1, attributes: ["name": .string("x")])]))
            }
            #expect(throws: CVManagedStructError.invalidObject(message: "delete of \(company), which was never saved"))
            {
                try store.apply(ChangeSet(deletes: [ObjectDeletion(id: company, version: 1)]))
            }
            #expect(try store.fetch(FetchRequest(entityName: "Company")).isEmpty)
            #expect(try store.fetch(FetchRequest(entityName: "Employee")).isEmpty)
            // The well-formed base applies.
            let result = try store.apply(base)
            #expect(result.permanentIDs.count == 2)
            // An upsert must carry every required attribute even when its row exists: PostgreSQL checks NOT NULL
            // on the proposed row before it finds the conflict, so MemoryStore refuses it too.
            func product(_ attributes: AttributeValues) -> ChangeSet {
                ChangeSet(inserts: [ObjectChange(id: .temporary("Product"), attributes: attributes, upsertKey: "id")])
            }
            _ = try store.apply(product(["id": .int32(1), "name": .string("a"), "price": .decimal(1)]))
            #expect(throws: CVManagedStructError.missingValue(entity: "Product", key: "price")) {
                try store.apply(product(["id": .int32(1), "name": .string("b")]))
            }
            #expect(try store.fetch(FetchRequest(entityName: "Product")).first?.attributes["name"] == .string("a"))
        },
        SuiteCase("a link is written from the side each store keeps; both sides sent by a context agree") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            let author = try context.insert(entityName: "Author")
            try author.setValue("a", forKey: "id")
            try author.setValue("A", forKey: "name")
            let article = try context.insert(entityName: "Article")
            for (key, value) in [("id", AttributeValue.int64(1)), ("title", .string("T")), ("text", .string(""))] {
                try article.setValue(value, forKey: key)
            }
            try article.setObject(author, forKey: "author")
            try await context.save(via: api)
            let rows = try store.fetch(ids: [author.objectID, article.objectID])
            let byEntity = Dictionary(uniqueKeysWithValues: rows.map { ($0.id.entityName, $0) })
            #expect(byEntity["Author"]?.toMany["articles"] == [article.objectID.primaryKey].compactMap { $0 })
            #expect(byEntity["Article"]?.toOne["author"] == .some(author.objectID.primaryKey))
            // Only the side no store keeps (the to-one of a one-to-many): nothing is linked on either store.
            let other = ManagedObjectID.temporary("Article")
            _ = try store.apply(
                ChangeSet(inserts: [
                    ObjectChange(
                        id: other, attributes: ["id": .int64(2), "title": .string("U"), "text": .string("")],
                        toOne: ["author": author.objectID])
                ]))
            let after = try store.fetch(ids: [author.objectID])
            #expect(after.first?.toMany["articles"]?.count == 1)
        },
    ]
}
