@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// The diff between two versions of a model without a database (issue 31, point 4): the same statements and
/// destructive steps as the migrator's diff against a database made for the older version.
@Suite struct OfflineDiffTests {
    /// Version 2 of the example model: an attribute added with a default, one made optional, one widened, one
    /// dropped, a unique attribute added, an entity added, a to-many relationship added, one made ordered.
    static func version2() throws -> ManagedObjectModel {
        var entities = ExampleModel.entities
        let employee = try #require(entities.firstIndex { $0.name == "Employee" })
        entities[employee].attributes.append(Attribute("email", .string, optional: true, unique: true))
        entities[employee].attributes.append(Attribute("level", .int16, defaultValue: .int16(1)))
        entities[employee].attributes[1].type = .int32  // age: smallint to integer
        entities[employee].attributes[3].isOptional = true  // department
        entities[employee].attributes.removeAll { $0.name == "job" }
        entities[employee].relationships.append(Relationship("badges", to: "Badge", .unorderedToMany))
        entities.append(Entity("Badge", attributes: [Attribute("code", .string, unique: true)]))
        let shop = try #require(entities.firstIndex { $0.name == "Shop" })
        entities[shop].relationships[1].kind = .orderedToMany  // products
        return try ManagedObjectModel(entities)
    }

    @Test func aModelAgainstItsOwnDDLHasNothingToDo() throws {
        #expect(try SchemaDiff.between(ExampleModel.model, ExampleModel.model).isEmpty)
        let version2 = try Self.version2()
        #expect(try SchemaDiff.between(version2, version2, schema: "s").isEmpty)
    }

    @Test func twoVersionsDifferAsTheMigratorSaysOfARealDatabase() throws {
        let version2 = try Self.version2()
        let offline = try SchemaDiff.between(ExampleModel.model, version2, schema: "v")
        #expect(!offline.statements.isEmpty && !offline.destructive.isEmpty)
        try TestDatabase.withSchema { url, schema in
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
            try TestDatabase.execute(url, SchemaPrinter(model: ExampleModel.model, schema: schema).ddl)
            let online = try Migrator(url: url, schema: schema).diff(model: version2)
            let renamed = try SchemaDiff.between(ExampleModel.model, version2, schema: schema)
            #expect(renamed.statements == online.statements)
            #expect(renamed.destructive == online.destructive)
        }
    }
}
