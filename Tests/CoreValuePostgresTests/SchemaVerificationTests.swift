@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

@Suite struct SchemaVerificationTests {
    @Test func openingAStoreListsEveryMismatchInOneError() throws {
        try TestDatabase.withSchema { url, schema in
            let model = try ManagedObjectModel {
                Entity("Team") {
                    Attribute("name", .string)
                    Attribute("size", .int32)
                    Attribute("motto", .string, optional: true)
                    Relationship("players", to: "Player", .orderedToMany)
                }
                Entity("Player") {
                    Attribute("name", .string)
                }
            }
            let s = SQLIdentifier.quote(schema)
            // "name" has the database's collation instead of "C", "size" the wrong type, "motto" the wrong
            // nullability, "name" is missing from Player, and the join table is missing.
            try TestDatabase.execute(
                url,
                """
                CREATE SCHEMA \(s);
                CREATE TABLE \(s)."Team" ("_pk" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    "_version" bigint NOT NULL DEFAULT 1, "name" text NOT NULL, "size" bigint NOT NULL,
                    "motto" text COLLATE "C" NOT NULL);
                CREATE TABLE \(s)."Player" ("_pk" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    "_version" bigint NOT NULL DEFAULT 1);
                """)
            #expect {
                try PostgresStore(
                    model: model,
                    configuration: try .init(url: url, schema: schema).with { $0.resolvesCommitOutcomes = false })
            } throws: { error in
                guard let error = error as? PostgresStoreError, error.code == .schemaMismatch else { return false }
                return error.mismatches == [
                    #"column "Team"."name" has collation default, expected C"#,
                    #"column "Team"."size" has type bigint, expected integer"#,
                    #"column "Team"."motto" is NOT NULL, expected nullable"#,
                    #"column "Player"."name" is missing (expected text)"#,
                    #"table "Team_players" is missing"#,
                ] && error.description.contains("5 differences")
            }
            let emptySchema = schema + "_empty"
            defer {
                try? TestDatabase.execute(url, "DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(emptySchema)) CASCADE")
            }
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(emptySchema))")
            try TestDatabase.execute(url, SchemaPrinter(model: model, schema: emptySchema).ddl)
            // The printed DDL is exactly what verification expects.
            let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: emptySchema))
            try store.verify()
            store.close()
        }
    }

    @Test func missingKeysConstraintsAndIdentityAreListedToo() throws {
        try TestDatabase.withSchema { url, schema in
            let model = try ManagedObjectModel {
                Entity("Team") {
                    Attribute("code", .string, unique: true)
                    Relationship("captain", to: "Player")
                    Relationship("players", to: "Player", .orderedToMany)
                }
                Entity("Player") {
                    Attribute("name", .string)
                }
            }
            let s = SQLIdentifier.quote(schema)
            // Every column is right; what is wrong: "_pk" of Team is no identity, "code" is not UNIQUE, "captain"
            // has no foreign key, the join table has no primary key, an immediate UNIQUE (owner, position) and
            // the wrong ON DELETE on "member".
            try TestDatabase.execute(
                url,
                """
                CREATE SCHEMA \(s);
                CREATE TABLE \(s)."Team" ("_pk" bigint PRIMARY KEY, "_version" bigint NOT NULL DEFAULT 1,
                    "code" text COLLATE "C" NOT NULL, "captain" bigint);
                CREATE TABLE \(s)."Player" ("_pk" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    "_version" bigint NOT NULL DEFAULT 1, "name" text COLLATE "C" NOT NULL);
                CREATE TABLE \(s)."Team_players" (
                    "owner" bigint NOT NULL REFERENCES \(s)."Team" ("_pk") ON DELETE CASCADE,
                    "member" bigint NOT NULL REFERENCES \(s)."Player" ("_pk") ON DELETE SET NULL,
                    "position" integer NOT NULL, UNIQUE ("owner", "position"));
                """)
            #expect {
                try PostgresStore(
                    model: model,
                    configuration: try .init(url: url, schema: schema).with { $0.resolvesCommitOutcomes = false })
            } throws: { error in
                guard let error = error as? PostgresStoreError, error.code == .schemaMismatch else { return false }
                let expected = [
                    #"column "Team"."_pk" is not an identity column"#,
                    #"column "Team"."code" has no UNIQUE constraint (unique attribute, the upsert key; a deferrable one cannot serve ON CONFLICT)"#,
                    #"column "Team"."captain" has no FOREIGN KEY to "Player""#,
                    #"table "Team_players" has no PRIMARY KEY ("member", "owner")"#,
                    #"table "Team_players" has no UNIQUE ("owner", "position") DEFERRABLE INITIALLY DEFERRED"#,
                    #"foreign key on "Team_players"."member" does not say ON DELETE CASCADE (found SET NULL)"#,
                ]
                return error.mismatches == expected && error.description.contains("6 differences")
            }
        }
    }

    @Test func onlyTheGivenOrCurrentSchemaIsLookedAt() throws {
        try TestDatabase.withSchema { url, schema in
            let model = try ManagedObjectModel { Entity("Solo") { Attribute("name", .string) } }
            let other = schema + "_other"
            defer { try? TestDatabase.execute(url, "DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(other)) CASCADE") }
            // The tables live in "other"; the store's schema is empty. A lookup through the whole search path
            // (or across schemas) would find them.
            try TestDatabase.execute(
                url, "CREATE SCHEMA \(SQLIdentifier.quote(schema)); CREATE SCHEMA \(SQLIdentifier.quote(other))")
            try TestDatabase.execute(url, SchemaPrinter(model: model, schema: other).ddl)
            #expect {
                try PostgresStore(
                    model: model,
                    configuration: try .init(url: url, schema: schema).with { $0.resolvesCommitOutcomes = false })
            } throws: { error in
                (error as? PostgresStoreError)?.mismatches == [#"table "Solo" is missing"#]
            }
            let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: other))
            store.close()
        }
    }

    @Test func aCycleOfNewRowsIsLinkedAfterTheInserts() throws {
        try TestDatabase.withSchema { url, schema in
            let model = try ManagedObjectModel {
                Entity("Node") {
                    Attribute("name", .string)
                    Relationship("next", to: "Node")
                }
            }
            try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
            try TestDatabase.execute(url, SchemaPrinter(model: model, schema: schema).ddl)
            let store = try PostgresStore(model: model, configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            let a = ManagedObjectID.temporary("Node")
            let b = ManagedObjectID.temporary("Node")
            let before = store.statistics
            let result = try store.apply(
                ChangeSet(inserts: [
                    ObjectChange(id: a, attributes: ["name": .string("a")], toOne: ["next": b]),
                    ObjectChange(id: b, attributes: ["name": .string("b")], toOne: ["next": a]),
                ]))
            // And the commit identifier, in the same pipeline as the first.
            #expect(store.statistics.since(before).statements == 3)
            let keyA = try #require(result.permanentIDs[a]?.primaryKey)
            let keyB = try #require(result.permanentIDs[b]?.primaryKey)
            let rows = try store.fetch(
                FetchRequest(entityName: "Node", sortDescriptors: [CVSortDescriptor(key: "name")]))
            #expect(rows.map { $0.toOne["next"] ?? nil } == [keyB, keyA])
        }
    }

    /// Ordered join tables are keyed (member, owner) since the owner's (owner, position) index serves reads by
    /// owner; a database made before keeps (owner, member) and a member index. It opens and works alike.
    @Test func anOrderedJoinTableKeyedOwnerFirstStillWorks() throws {
        try TestDatabase.withExampleStore { _, url, schema in
            let table = SQLIdentifier("Company_employees", schema: schema).quoted
            try TestDatabase.execute(
                url,
                """
                ALTER TABLE \(table) DROP CONSTRAINT "Company_employees_pkey", ADD PRIMARY KEY ("owner", "member");
                CREATE INDEX ON \(table) ("member");
                """)
            // Nothing to migrate either.
            #expect(try Migrator(url: url, schema: schema).diff(model: ExampleModel.model).isEmpty)
            let store = try PostgresStore(model: ExampleModel.model, configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            let staff = (0..<3).map { Employee(name: "e\($0)", age: 30, position: nil, department: "Sales", job: "x") }
            var company = Company(name: "Old", employees: staff)
            try company.save(ManagedObjectContext(store: store))
            company.employees.reverse()
            try company.save(ManagedObjectContext(store: store))
            let loaded: [Company] = try Company.query(
                ManagedObjectContext(store: store), predicate: .key("name") == "Old")
            #expect(loaded.map { $0.employees.map(\.name) } == [["e2", "e1", "e0"]])
            // Deleting a member reaches its link through the member index.
            try company.employees[0].delete(ManagedObjectContext(store: store))
            let after: [Company] = try Company.query(
                ManagedObjectContext(store: store), predicate: .key("name") == "Old")
            #expect(after.map { $0.employees.map(\.name) } == [["e1", "e0"]])
        }
    }
}
