@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// Foreign keys carry the inverse relationship's delete rule: a rule says what deleting the source does.
@Suite struct DeleteRuleTests {
    /// `U.ref -> R` (cascade, no inverse), and a one-to-one pair `A.b <-> B.a` whose inverse rules vary.
    static func model(inverseRule: Relationship.DeleteRule) throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("U") {
                Attribute("name", .string)
                Relationship("ref", to: "R", deleteRule: .cascade)
            }
            Entity("R") {
                Attribute("name", .string)
            }
            Entity("A") {
                Attribute("name", .string)
                Relationship("b", to: "B", inverse: "a")
            }
            Entity("B") {
                Attribute("name", .string)
                Relationship("a", to: "A", inverse: "b", deleteRule: inverseRule)
            }
        }
    }

    @Test(arguments: [
        (Relationship.DeleteRule.cascade, "CASCADE"), (.deny, "NO ACTION"), (.nullify, "SET NULL"),
        (.noAction, "SET NULL"),
    ])
    func theForeignKeyTakesTheInverseRule(rule: Relationship.DeleteRule, action: String) throws {
        let mapping = SchemaMapping(model: try Self.model(inverseRule: rule))
        let tables = Dictionary(uniqueKeysWithValues: mapping.tables.map { ($0.name, $0) })
        #expect(tables["A"]?.foreignKeys.map(\.onDelete) == [action])
        // No inverse: the source's own cascade rule must not delete sources when a destination goes.
        #expect(tables["U"]?.foreignKeys.map(\.onDelete) == ["SET NULL"])
    }

    @Test func deletingTheDestinationOfACascadeWithoutInverseKeepsTheSource() throws {
        try TestDatabase.withSchema { url, schema in
            let model = try Self.model(inverseRule: .nullify)
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
            try TestDatabase.execute(url, SchemaPrinter(model: model, schema: schema).ddl)
            let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            let r = ObjectChange(id: .temporary("R"), attributes: ["name": .string("r")])
            let u = ObjectChange(id: .temporary("U"), attributes: ["name": .string("u")], toOne: ["ref": r.id])
            let saved = try store.apply(ChangeSet(inserts: [r, u]))
            let rID = try #require(saved.permanentIDs[r.id])
            let uID = try #require(saved.permanentIDs[u.id])
            _ = try store.apply(ChangeSet(deletes: [ObjectDeletion(id: rID, version: nil)]))
            let rows = try store.fetch(ids: [uID])
            #expect(rows.count == 1)
            #expect(rows.first.map { $0.toOne["ref"] == .some(nil) } == true)
        }
    }
}

/// "No Action" on PostgreSQL: the context loads nothing; the foreign key (`ON DELETE SET NULL`) and the join
/// rows (`ON DELETE CASCADE`) leave no link to the deleted row.
@Test func noActionLeavesTheDestinationsAloneAndTheDatabaseKeepsNoDanglingLink() throws {
    guard TestDatabase.isAvailable("noActionLeavesTheDestinationsAlone") else { return }
    try TestSchema.with(model: NoActionSuite.model) { try NoActionSuite.check($0.store) }
    try TestSchema.with(model: NoActionSuite.model) { try NoActionSuite.checkRegistered($0.store) }
}
