@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

@testable import CoreValuePostgres

@Suite struct SchemaDDLTests {
    static let model: ManagedObjectModel? = try? ManagedObjectModel {
        Entity("Team") {
            Attribute("code", .string, unique: true)
            Attribute("size", .int32, defaultValue: .int32(5))
            Attribute("motto", .string, optional: true, defaultValue: .string("it's \"fine\""))
            Relationship("captain", to: "Player", deleteRule: .deny)
            Relationship("players", to: "Player", .orderedToMany, inverse: "team")
            Relationship("scouts", to: "Player", .unorderedToMany)
        }
        Entity("Player") {
            Attribute("name", .string)
            Relationship("team", to: "Team", inverse: "players")
            Relationship("mentor", to: "Player", deleteRule: .cascade)
        }
    }

    @Test func printsDeterministicDDL() throws {
        let model = try #require(Self.model)
        let ddl = SchemaPrinter(model: model, schema: "s").ddl
        #expect(
            ddl == """
                CREATE TABLE "s"."Team" (
                    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    "_version" bigint NOT NULL DEFAULT 1,
                    "code" text COLLATE "C" NOT NULL UNIQUE,
                    "size" integer NOT NULL DEFAULT 5,
                    "motto" text COLLATE "C" DEFAULT 'it''s "fine"',
                    "captain" bigint
                );

                CREATE TABLE "s"."Player" (
                    "_pk" bigint NOT NULL GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    "_version" bigint NOT NULL DEFAULT 1,
                    "name" text COLLATE "C" NOT NULL,
                    "mentor" bigint
                );

                CREATE TABLE "s"."Team_players" (
                    "owner" bigint NOT NULL REFERENCES "s"."Team" ("_pk") ON DELETE CASCADE,
                    "member" bigint NOT NULL REFERENCES "s"."Player" ("_pk") ON DELETE CASCADE,
                    "position" integer NOT NULL,
                    PRIMARY KEY ("member", "owner"),
                    UNIQUE ("member") DEFERRABLE INITIALLY DEFERRED,
                    UNIQUE ("owner", "position") DEFERRABLE INITIALLY DEFERRED
                );

                CREATE TABLE "s"."Team_scouts" (
                    "owner" bigint NOT NULL REFERENCES "s"."Team" ("_pk") ON DELETE CASCADE,
                    "member" bigint NOT NULL REFERENCES "s"."Player" ("_pk") ON DELETE CASCADE,
                    PRIMARY KEY ("owner", "member")
                );

                CREATE TABLE "s"."_corevalue_commits" (
                    "id" uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000' PRIMARY KEY,
                    "at" timestamptz NOT NULL DEFAULT '-infinity',
                    "result" jsonb
                );
                INSERT INTO "s"."_corevalue_commits" DEFAULT VALUES;

                ALTER TABLE "s"."Team" ADD FOREIGN KEY ("captain") REFERENCES "s"."Player" ("_pk") ON DELETE SET NULL;

                ALTER TABLE "s"."Player" ADD FOREIGN KEY ("mentor") REFERENCES "s"."Player" ("_pk") ON DELETE SET NULL;

                CREATE INDEX ON "s"."Team" ("captain");

                CREATE INDEX ON "s"."Player" ("mentor");

                CREATE INDEX ON "s"."Team_scouts" ("member");

                """)
        #expect(SchemaPrinter(model: model, schema: "s").ddl == ddl)
    }

    @Test func theMigrationFilesAreTheExampleModelsDDL() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let first = try String(
            contentsOf: root.appendingPathComponent("migrations/0001_example_model.sql"), encoding: .utf8)
        let model = try ExampleModel.make()
        #expect(first == SchemaPrinter(mapping: SchemaMapping(model: model, resolvesCommits: false), schema: nil).ddl)
        // The second adds the commit table, as the diff from the first to the whole DDL does.
        let second = try String(
            contentsOf: root.appendingPathComponent("migrations/0002_commit_table.sql"), encoding: .utf8)
        let diff = SchemaDiff(
            mapping: SchemaMapping(model: model),
            catalog: SchemaCatalog(expectedFor: SchemaMapping(model: model, resolvesCommits: false)), schema: nil)
        let statements = second.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n")
        let expected = diff.statements.joined(separator: "\n")
        #expect(statements.split(whereSeparator: \.isWhitespace) == expected.split(whereSeparator: \.isWhitespace))
    }

    @Test(arguments: [
        (AttributeValue.int16(-3), "-3"), (.int64(9_000_000_000), "9000000000"), (.bool(true), "TRUE"),
        (.double(1.5), "1.5"), (.double(.infinity), "'Infinity'::double precision"),
        (.data(Data([0, 171])), "'\\x00ab'::bytea"), (.decimal(Decimal(string: "12.50") ?? 0), "'12.5'::numeric"),
        (.date(Date(timeIntervalSince1970: 1.5)), "'1970-01-01 00:00:01.500000+00'::timestamptz"),
        (.string("a'b"), "'a''b'"),
    ])
    func rendersDefaultLiterals(value: AttributeValue, literal: String) {
        #expect(SQLLiteral.render(value) == literal)
    }
}
