@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// The entity inheritance suite against `PostgresStore`, through both APIs: each case in a fresh schema
/// migrated from the model's DDL (one table per hierarchy), checked at open.
@Test(arguments: InheritanceSuite.cases, APIMode.allCases)
func postgresStoreInheritance(_ check: SuiteCase, _ api: APIMode) async throws {
    guard TestDatabase.isAvailable("postgresStoreInheritance(\(check.name))") else { return }
    try await TestSchema.with(model: InheritanceSuite.model, configure: { $0.poolSize = 2 }) { schema in
        let store = schema.store
        try await check.run({ store }, api)
    }
}

/// The suite once more as an application role with only the GRANTs `SchemaPrinter.grants(to:)` prints for
/// the model (one table per hierarchy: no grant names a subentity).
@Test(arguments: InheritanceSuite.cases)
func postgresStoreInheritanceAsApplicationRole(_ check: SuiteCase) async throws {
    guard TestDatabase.isAvailable("postgresStoreInheritanceAsApplicationRole(\(check.name))") else { return }
    try await TestSchema.with(model: InheritanceSuite.model) { schema in
        let role = "cv_inh_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try Connection(schema.url)
        defer {
            try? admin.execute("DROP OWNED BY \(SQLIdentifier.quote(role))")
            try? admin.execute("DROP ROLE IF EXISTS \(SQLIdentifier.quote(role))")
            admin.close()
        }
        try admin.execute("CREATE ROLE \(SQLIdentifier.quote(role)) LOGIN")
        try admin.execute(SchemaPrinter(model: InheritanceSuite.model, schema: schema.name).grants(to: role))
        let store = try PostgresStore(
            model: InheritanceSuite.model,
            configuration: try .init(url: LeastPrivilegeTests.url(schema.url, user: role), schema: schema.name))
        defer { store.close() }
        try await check.run({ store }, .sync)
    }
}

/// History of a hierarchy's objects in `PostgresStore`: a delete's tombstone is read from the root's table.
@Test func postgresStoreRecordsTheHistoryOfAHierarchy() throws {
    guard TestDatabase.isAvailable("postgresStoreRecordsTheHistoryOfAHierarchy") else { return }
    try TestSchema.withEmpty { schema in
        try Migrator(url: schema.url, schema: schema.name).migrate(model: InheritanceSuite.model, recordsHistory: true)
        let store = try PostgresStore(
            model: InheritanceSuite.model,
            configuration: try .init(url: schema.url, schema: schema.name).with { $0.recordsHistory = true })
        defer { store.close() }
        try InheritanceSuite.checkHistory(store)
    }
}

/// The mapping of a hierarchy: one table per hierarchy, named after its root, with an entity column.
@Suite struct InheritanceMappingTests {
    @Test func aHierarchyIsOneTableWithAnEntityColumn() throws {
        let mapping = SchemaMapping(model: InheritanceSuite.model, resolvesCommits: false)
        #expect(mapping.tables.map(\.name) == ["Media", "Album", "Album_items"])
        let media = try #require(mapping.tables.first)
        // `album` is read from Album's join table (the to-many side keeps the links).
        #expect(
            media.columns.map(\.name) == ["_pk", "_version", "_entity", "code", "title", "width", "sensor", "seconds"])
        // The root's own attributes keep NOT NULL; a subentity's are nullable (other entities' rows hold none).
        let nullable = Dictionary(uniqueKeysWithValues: media.columns.map { ($0.name, $0.isNullable) })
        #expect(nullable["_entity"] == false && nullable["title"] == false)
        #expect(nullable["width"] == true && nullable["sensor"] == true && nullable["seconds"] == true)
        #expect(media.columns.first { $0.name == "code" }?.isUnique == true)
        // Links to the abstract root reference its table.
        let album = try #require(mapping.tables.first { $0.name == "Album" })
        #expect(album.foreignKeys.map(\.referencedTable) == ["Media"])
        let items = try #require(mapping.tables.first { $0.name == "Album_items" })
        #expect(items.foreignKeys.map(\.referencedTable) == ["Album", "Media"])
        #expect(mapping.tableName(of: "RawPhoto") == "Media")
        #expect(mapping.isHierarchical("Video") && !mapping.isHierarchical("Album"))
        try mapping.validate()
    }

    @Test func theDDLOfAHierarchy() throws {
        let ddl = SchemaPrinter(model: InheritanceSuite.model, schema: "s").ddl
        #expect(ddl.contains(#"CREATE TABLE "s"."Media""#))
        #expect(ddl.contains(#""_entity" text NOT NULL"#))
        #expect(!ddl.contains(#"CREATE TABLE "s"."Photo""#))
        #expect(!ddl.contains(#"CREATE TABLE "s"."Video""#))
        // Photo and Video each declare width: one column.
        #expect(ddl.components(separatedBy: #""width" bigint"#).count == 2)
        let grants = SchemaPrinter(model: InheritanceSuite.model, schema: "s").grants(to: "app")
        #expect(grants.contains(#""s"."Media""#) && !grants.contains(#""s"."Photo""#))
    }

    /// The schema check at open passes on the DDL, and names a hierarchy's missing entity column.
    @Test func theSchemaCheckAtOpenKnowsTheEntityColumn() throws {
        guard TestDatabase.isAvailable("theSchemaCheckAtOpenKnowsTheEntityColumn") else { return }
        try TestDatabase.withSchema { url, schema in
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
            try TestDatabase.execute(url, SchemaPrinter(model: InheritanceSuite.model, schema: schema).ddl)
            let store = try PostgresStore(
                model: InheritanceSuite.model, configuration: try .init(url: url, schema: schema))
            store.close()
            try TestDatabase.execute(
                url, "ALTER TABLE \(SQLIdentifier.quote(schema)).\"Media\" DROP COLUMN \"_entity\"")
            #expect {
                _ = try PostgresStore(model: InheritanceSuite.model, configuration: try .init(url: url, schema: schema))
            } throws: { error in
                "\(error)".contains("_entity")
            }
        }
    }

    /// A column siblings share: the mapping has it once, nullable, with a DEFAULT only when every sibling
    /// declares the same default; a migrated schema passes the check at open and diffs empty; a sibling that
    /// starts declaring a column another already has adds nothing.
    @Test func siblingsShareOneColumn() throws {
        func model(_ videoWidth: Attribute?, photoDefault: Int64? = 640) throws -> ManagedObjectModel {
            try ManagedObjectModel([
                Entity("Media", abstract: true, attributes: [Attribute("code", .string, unique: true)]),
                Entity(
                    "Photo", parent: "Media",
                    attributes: [Attribute("width", .int64, defaultValue: photoDefault.map(AttributeValue.int64))]),
                Entity(
                    "Video", parent: "Media",
                    attributes: [Attribute("seconds", .double)] + (videoWidth.map { [$0] } ?? [])),
            ])
        }
        let same = try model(Attribute("width", .int64, optional: true, defaultValue: .int64(640)))
        let media = try #require(SchemaMapping(model: same, resolvesCommits: false).tables.first)
        #expect(media.columns.map(\.name) == ["_pk", "_version", "_entity", "code", "width", "seconds"])
        let width = try #require(media.columns.first { $0.name == "width" })
        #expect(width.isNullable && !width.isUnique && width.defaultLiteral == "640")
        let differing = try model(Attribute("width", .int64, defaultValue: .int64(1_920)))
        let shared = try #require(
            SchemaMapping(model: differing, resolvesCommits: false).tables.first?.columns.first { $0.name == "width" })
        #expect(shared.defaultLiteral == nil && shared.constraints.isEmpty)
        let ddl = SchemaPrinter(model: differing, schema: "s").ddl
        #expect(ddl.components(separatedBy: #""width" bigint"#).count == 2)
        // Video starts declaring the width Photo has: its column is already there.
        let before = try model(nil, photoDefault: nil)
        let after = try model(Attribute("width", .int64), photoDefault: nil)
        #expect(try SchemaDiff.between(before, after).isEmpty)
        #expect(try SchemaDiff.between(after, after).isEmpty)
        guard TestDatabase.isAvailable("siblingsShareOneColumn") else { return }
        for model in [same, differing, after] {
            try TestSchema.withEmpty { schema in
                let migrator = try Migrator(url: schema.url, schema: schema.name)
                #expect(try !migrator.migrate(model: model).isEmpty)
                // Read back from the catalog, the schema matches the model: the shared column once.
                #expect(try migrator.migrate(model: model).isEmpty)
                // The schema check at open passes: the shared column is checked once.
                let store = try PostgresStore(
                    model: model, configuration: try .init(url: schema.url, schema: schema.name))
                store.close()
            }
        }
    }

    /// The diff from a model without the hierarchy's new subentity adds its columns to the root's table, and
    /// from one table per entity to a hierarchy creates the hierarchy's table.
    @Test func theDiffOfAHierarchy() throws {
        var entities = InheritanceSuite.model.entities.map { entity in
            Entity(
                entity.name, parent: entity.parent, abstract: entity.isAbstract,
                attributes: Array(entity.declaredAttributes), relationships: Array(entity.declaredRelationships))
        }
        let before = try ManagedObjectModel(entities)
        #expect(try SchemaDiff.between(before, InheritanceSuite.model).isEmpty)
        entities.append(Entity("Audio", parent: "Media", attributes: [Attribute("bitrate", .int32, optional: true)]))
        let after = try ManagedObjectModel(entities)
        let diff = try SchemaDiff.between(before, after, schema: "s")
        #expect(diff.destructive.isEmpty)
        #expect(diff.statements.contains { $0.contains(#"ALTER TABLE "s"."Media" ADD COLUMN "bitrate" integer"#) })
        #expect(!diff.statements.contains { $0.contains(#"CREATE TABLE "s"."Audio""#) })
    }
}
