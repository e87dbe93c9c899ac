@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

/// Models PostgreSQL cannot hold unchanged are refused when the store (or `corevalue schema`) is built.
@Suite struct ModelMappingValidationTests {
    static let long = String(repeating: "n", count: 64)

    static func expectInvalid(_ model: ManagedObjectModel, naming parts: [String]) throws {
        #expect {
            try SchemaMapping(model: model).validate()
        } throws: { error in
            guard let error = error as? PostgresStoreError, error.code == .invalidModel else { return false }
            return parts.allSatisfy { error.message.contains($0) }
        }
        // The store refuses it before any connection is made (nothing listens on port 1).
        #expect {
            try PostgresStore(
                model: model,
                configuration: .init(connection: try ConnectionConfiguration("host=127.0.0.1 port=1 connect_timeout=1"))
            )
        } throws: { error in
            (error as? PostgresStoreError)?.code == .invalidModel
        }
    }

    @Test func namesOver63BytesAreRefusedNamingEntityAndKey() throws {
        try Self.expectInvalid(
            try ManagedObjectModel { Entity(Self.long) { Attribute("name", .string) } },
            naming: [Self.long, "64 bytes"])
        try Self.expectInvalid(
            try ManagedObjectModel { Entity("E") { Attribute(Self.long, .string) } }, naming: ["'E.\(Self.long)'"])
        // 63 bytes, but "é" is two: 32 of them are 64 bytes.
        let wide = String(repeating: "é", count: 32)
        try Self.expectInvalid(
            try ManagedObjectModel {
                Entity("E") { Relationship(wide, to: "E") }
            }, naming: ["'E.\(wide)'"])
        let entity = String(repeating: "e", count: 40)
        let relationship = String(repeating: "r", count: 30)
        try Self.expectInvalid(
            try ManagedObjectModel {
                Entity(entity) { Relationship(relationship, to: entity, .unorderedToMany) }
            }, naming: ["'\(entity).\(relationship)'", "table name"])
    }

    @Test func aJoinTableNamedLikeAnEntityIsRefused() throws {
        try Self.expectInvalid(
            try ManagedObjectModel {
                Entity("A") { Relationship("b", to: "C", .orderedToMany) }
                Entity("A_b") { Attribute("name", .string) }
                Entity("C") { Attribute("name", .string) }
            }, naming: ["'A.b'", "\"A_b\"", "entity 'A_b'"])
    }

    @Test(arguments: [Double.infinity, -Double.infinity, 1e300, -1e15])
    func dateDefaultsOutsidePostgreSQLsRangeAreRefused(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        try Self.expectInvalid(
            try ManagedObjectModel {
                Entity("E") { Attribute("at", .date, defaultValue: .date(date)) }
            }, naming: ["'E.at'", "default date"])
        // Rendering never traps, even when validation was skipped.
        #expect(SQLLiteral.render(.date(date)).hasSuffix("infinity'::timestamptz"))
    }

    @Test func theExampleModelIsValid() throws {
        try SchemaMapping(model: try ExampleModel.make()).validate()
    }

    @Test func partialUpdatesOfColumnsWithLongSimilarNamesUseDistinctFlags() throws {
        try TestDatabase.withSchema { url, schema in
            let prefix = String(repeating: "p", count: 60)
            let model = try ManagedObjectModel {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute(prefix + "one", .string, optional: true)
                    Attribute(prefix + "two", .string, optional: true)
                }
            }
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
            try TestDatabase.execute(url, SchemaPrinter(model: model, schema: schema).ddl)
            let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            let first = ObjectChange(id: .temporary("Item"), attributes: ["name": .string("a")])
            let second = ObjectChange(id: .temporary("Item"), attributes: ["name": .string("b")])
            let saved = try store.apply(ChangeSet(inserts: [first, second]))
            let ids = try [first, second].map { try #require(saved.permanentIDs[$0.id]) }
            // Only the first row sets the long columns: each gets an "is set" flag column in one statement.
            _ = try store.apply(
                ChangeSet(updates: [
                    ObjectChange(
                        id: ids[0], version: 1,
                        attributes: [prefix + "one": .string("1"), prefix + "two": .string("2")]),
                    ObjectChange(id: ids[1], version: 1, attributes: ["name": .string("b2")]),
                ]))
            let rows = try store.fetch(ids: ids).sorted { ($0.id.primaryKey ?? 0) < ($1.id.primaryKey ?? 0) }
            #expect(rows.map { $0.attributes[prefix + "one"] } == [.string("1"), .null])
            #expect(rows.map { $0.attributes[prefix + "two"] } == [.string("2"), .null])
            #expect(rows.map { $0.attributes["name"] } == [.string("a"), .string("b2")])
        }
    }
}
