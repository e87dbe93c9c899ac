@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// Models that evolve: `Migrator.migrate(model:)` creates what is missing, and `Migrator.diff(model:)`
/// prints the DDL from one model version to the next, which, applied, makes the store's check at open pass.
@Suite struct SchemaDiffTests {
    static func version1() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Author") {
                Attribute("code", .string, unique: true)
                Attribute("name", .string)
                Attribute("born", .int16)
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author")
            }
        }
    }

    /// Every kind of addition at once: an entity, attributes (optional, required with a default, unique),
    /// a to-one, an unordered and an ordered to-many, optionality relaxed, a default, a widened type.
    static func version2() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Author") {
                Attribute("code", .string, unique: true)
                Attribute("name", .string, optional: true)
                Attribute("born", .int32)
                Attribute("nickname", .string, optional: true)
                Attribute("rating", .double, defaultValue: .double(3.5))
                Attribute("email", .string, optional: true, unique: true)
                Relationship("favourite", to: "Book")
                Relationship("shelves", to: "Shelf", .orderedToMany, inverse: "authors")
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("pages", .int32, defaultValue: .int32(0))
                Relationship("author", to: "Author")
                Relationship("tags", to: "Tag", .unorderedToMany)
            }
            Entity("Tag") { Attribute("label", .string) }
            Entity("Shelf") {
                Attribute("name", .string)
                Relationship("authors", to: "Author", .unorderedToMany, inverse: "shelves")
            }
        }
    }

    @Test func eachKindOfChangeIsDDLThatTheCheckAtOpenAccepts() throws {
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            let first = try migrator.migrate(model: try Self.version1())
            #expect(first.statements.count >= 3)
            #expect(try migrator.diff(model: try Self.version1()).isEmpty)
            try PostgresStore(model: try Self.version1(), configuration: try .init(url: url, schema: schema)).close()
            // Data in the old shape survives the change.
            let old = try PostgresStore(model: try Self.version1(), configuration: try .init(url: url, schema: schema))
            let context = ManagedObjectContext(store: old)
            let author = try context.insert(entityName: "Author")
            try author.setValue("a1", forKey: "code")
            try author.setValue("Ann", forKey: "name")
            try author.setValue(Int16(1970), forKey: "born")
            try context.save()
            old.close()

            let diff = try migrator.diff(model: try Self.version2())
            #expect(diff.destructive.isEmpty, "\(diff.destructive)")
            let text = diff.migrationText
            for expected in [
                #"CREATE TABLE "\#(schema)"."Tag""#, #"ADD COLUMN "nickname" text COLLATE "C""#,
                #"ADD COLUMN "rating" double precision NOT NULL DEFAULT"#, #"ADD COLUMN "email""#,
                #"ALTER COLUMN "name" DROP NOT NULL"#, #"ALTER COLUMN "born" TYPE integer"#,
                #"ADD COLUMN "favourite" bigint"#, #"CREATE TABLE "\#(schema)"."Book_tags""#,
                #"CREATE TABLE "\#(schema)"."Author_shelves""#,
            ] {
                #expect(text.contains(expected), "missing \(expected) in:\n\(text)")
            }
            // Applying the printed file is what a user does; migrate(model:) applies the same statements.
            try TestDatabase.execute(url, text)
            #expect(try migrator.diff(model: try Self.version2()).isEmpty)
            let store = try PostgresStore(
                model: try Self.version2(), configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            let read = try ManagedObjectContext(store: store).fetch(FetchRequest(entityName: "Author"))
            #expect(try read.first?.value(forKey: "rating") == .double(3.5))
            #expect(try read.first?.value(forKey: "born") == .int32(1970))
        }
    }

    @Test func migrateModelCreatesWhatIsMissingAndRefusesDestructiveSteps() throws {
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            try migrator.migrate(model: try Self.version1())
            #expect(try migrator.migrate(model: try Self.version2()).statements.isEmpty == false)
            #expect(try migrator.migrate(model: try Self.version2()).isEmpty)
            try PostgresStore(model: try Self.version2(), configuration: try .init(url: url, schema: schema)).close()
            // Back to version 1: columns and tables to drop, a type to narrow, a column to make required.
            let back = try migrator.diff(model: try Self.version1())
            #expect(back.statements.allSatisfy { !$0.contains("DROP COLUMN") && !$0.contains("DROP TABLE") })
            #expect(back.destructive.contains { $0.contains(#"DROP COLUMN "nickname""#) })
            #expect(back.destructive.contains { $0.contains(#"DROP TABLE"#) && $0.contains(#""Tag""#) })
            #expect(back.destructive.contains { $0.contains(#"TYPE smallint"#) })
            #expect(back.destructive.contains { $0.contains("SET NOT NULL") })
            #expect(back.migrationText.contains("-- \(back.destructive[0])"))
            #expect {
                try migrator.migrate(model: try Self.version1())
            } throws: { error in
                (error as? PostgresStoreError)?.code == .migrationNeedsReview
            }
            // Nothing was applied: version 2 still opens.
            try PostgresStore(model: try Self.version2(), configuration: try .init(url: url, schema: schema)).close()
        }
    }

    @Test func aToManyThatBecomesOrderedGetsItsPositions() throws {
        func model(_ kind: Relationship.Kind) throws -> ManagedObjectModel {
            try ManagedObjectModel {
                Entity("List") { Relationship("items", to: "Item", kind) }
                Entity("Item") { Attribute("label", .string) }
            }
        }
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            try migrator.migrate(model: try model(.unorderedToMany))
            let diff = try migrator.diff(model: try model(.orderedToMany))
            #expect(diff.statements.contains { $0.contains(#"ADD COLUMN "position" integer NOT NULL"#) })
            #expect(diff.statements.contains { $0.contains("DEFERRABLE INITIALLY DEFERRED") })
            try migrator.migrate(model: try model(.orderedToMany))
            try PostgresStore(model: try model(.orderedToMany), configuration: try .init(url: url, schema: schema))
                .close()
            let back = try migrator.diff(model: try model(.unorderedToMany))
            #expect(back.destructive.contains { $0.contains(#"DROP COLUMN "position""#) })
        }
    }

    /// An ordered join table is keyed (member, owner) and reads by owner through UNIQUE (owner, position);
    /// a one-to-many's finds members through UNIQUE (member). Made unordered, or many-to-many, it would lose
    /// that index with the column or constraint: the diff creates the index in its place.
    @Test func aJoinTableThatChangesKindKeepsAnIndexForEachSide() throws {
        func model(_ kind: Relationship.Kind, oneToMany: Bool = false) throws -> ManagedObjectModel {
            try ManagedObjectModel {
                Entity("List") {
                    if oneToMany {
                        Relationship("items", to: "Item", kind, inverse: "list")
                    } else {
                        Relationship("items", to: "Item", kind)
                    }
                }
                Entity("Item") {
                    Attribute("label", .string)
                    if oneToMany { Relationship("list", to: "List", inverse: "items") }
                }
            }
        }
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            let table = SQLIdentifier("List_items", schema: schema).quoted
            // Ordered, then unordered: the owner's index goes with "position".
            try migrator.migrate(model: try model(.orderedToMany))
            let unordered = try migrator.diff(model: try model(.unorderedToMany))
            #expect(unordered.destructive.contains { $0.contains(#"DROP COLUMN "position""#) })
            #expect(unordered.statements == [#"CREATE INDEX ON \#(table) ("owner");"#])
            try TestDatabase.execute(url, unordered.statements.joined(separator: "\n"))
            try TestDatabase.execute(url, #"ALTER TABLE \#(table) DROP COLUMN "position""#)
            #expect(try migrator.diff(model: try model(.unorderedToMany)).isEmpty)
            try PostgresStore(model: try model(.unorderedToMany), configuration: try .init(url: url, schema: schema))
                .close()
        }
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            let table = SQLIdentifier("List_items", schema: schema).quoted
            // One-to-many, then many-to-many: the member's index goes with UNIQUE (member).
            try migrator.migrate(model: try model(.unorderedToMany, oneToMany: true))
            let many = try migrator.diff(model: try model(.unorderedToMany))
            #expect(many.destructive.contains { $0.contains(#"UNIQUE (member)"#) })
            #expect(many.statements == [#"CREATE INDEX ON \#(table) ("member");"#])
            #expect(try migrator.diff(model: try model(.unorderedToMany, oneToMany: true)).isEmpty)
        }
    }

    @Test func theExampleModelsMigrationsLeaveNoDiff() throws {
        try TestDatabase.withExampleStore { _, url, schema in
            let diff = try Migrator(url: url, schema: schema).diff(model: ExampleModel.model)
            #expect(diff.isEmpty, "\(diff.migrationText)")
        }
    }
}
