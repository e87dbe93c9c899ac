@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

@Suite struct MigratorTests {
    /// A temporary directory with migration files, removed afterwards.
    static func withDirectory(_ files: [String: String], _ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cv-migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, contents) in files {
            try contents.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try body(directory)
    }

    @Test func migratesOnceRecordsStatusAndRefusesEditedFiles() throws {
        try TestDatabase.withSchema { url, schema in
            let files = [
                "0001_first.sql": "CREATE TABLE t (id bigint);\nINSERT INTO t VALUES (1);\n",
                "0002_second.sql": "ALTER TABLE t ADD COLUMN name text;",
                "README.md": "not a migration",
            ]
            try Self.withDirectory(files) { directory in
                let migrator = try Migrator(url: url, schema: schema)
                let pending = try migrator.status(try Migration.load(from: directory))
                #expect(pending.map(\.state) == [.pending, .pending])
                let applied = try migrator.migrate(try Migration.load(from: directory))
                #expect(applied.map(\.fileName) == ["0001_first.sql", "0002_second.sql"])
                #expect(try migrator.migrate(try Migration.load(from: directory)).isEmpty)
                let statuses = try migrator.status(try Migration.load(from: directory))
                #expect(statuses.map(\.state) == [.applied, .applied])
                #expect(statuses.map(\.name) == ["first", "second"])

                try "ALTER TABLE t ADD COLUMN other text;".write(
                    to: directory.appendingPathComponent("0002_second.sql"), atomically: true, encoding: .utf8)
                #expect {
                    try migrator.migrate(try Migration.load(from: directory))
                } throws: { error in
                    guard let error = error as? PostgresStoreError else { return false }
                    return error.code == .migrationChanged && error.message.contains("0002_second.sql")
                }
                #expect(try migrator.status(try Migration.load(from: directory)).map(\.state) == [.applied, .changed])
            }
        }
    }

    @Test func aFailingFileIsRolledBackAndTheOnesBeforeItStay() throws {
        try TestDatabase.withSchema { url, schema in
            let files = [
                "0001_ok.sql": "CREATE TABLE ok (id bigint);",
                "0002_bad.sql": "CREATE TABLE bad (id bigint); SELECT 1/0;",
            ]
            try Self.withDirectory(files) { directory in
                let migrator = try Migrator(url: url, schema: schema)
                #expect(throws: DatabaseError.self) { try migrator.migrate(try Migration.load(from: directory)) }
                #expect(try migrator.status(try Migration.load(from: directory)).map(\.state) == [.applied, .pending])
                let connection = try Connection(url)
                defer { connection.close() }
                let result = try connection.query(
                    "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'bad'",
                    [try PostgresValue(schema)])
                #expect(try result.decode(Int64.self, row: 0, column: 0) == 0)
            }
        }
    }

    @Test func aPendingFileOlderThanAnAppliedOneIsRefused() throws {
        try TestDatabase.withSchema { url, schema in
            try Self.withDirectory(["0002_second.sql": "CREATE TABLE two (id bigint);"]) { directory in
                let migrator = try Migrator(url: url, schema: schema)
                #expect(try migrator.migrate(try Migration.load(from: directory)).count == 1)
                try "CREATE TABLE one (id bigint);".write(
                    to: directory.appendingPathComponent("0001_first.sql"), atomically: true, encoding: .utf8)
                #expect {
                    try migrator.migrate(try Migration.load(from: directory))
                } throws: { error in
                    guard let error = error as? PostgresStoreError else { return false }
                    return error.code == .migrationOutOfOrder && error.message.contains("0001_first.sql")
                }
                #expect(try migrator.status(try Migration.load(from: directory)).map(\.state) == [.pending, .applied])
            }
        }
    }

    @Test func migrationsHoldNoSessionLockSoTheyWorkBehindATransactionPooler() throws {
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            // pg_advisory_unlock releases only a session-level lock: false when the migrator holds the
            // transaction-scoped one (a session lock would outlive the transaction on a pooled connection).
            let probe =
                "CREATE TABLE probe AS SELECT pg_advisory_unlock(\(migrator.lockKey)) AS released, "
                + "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS held;"
            try Self.withDirectory(["0001_probe.sql": probe]) { directory in
                #expect(try migrator.migrate(try Migration.load(from: directory)).count == 1)
                let connection = try Connection(url)
                defer { connection.close() }
                let result = try connection.query(
                    "SELECT released, held FROM \(SQLIdentifier.quote(schema)).probe")
                #expect(try result.decode(Bool.self, row: 0, column: 0) == false)
                #expect(try result.decode(Int64.self, row: 0, column: 1) == 1)
            }
        }
    }

    @Test func badFileNamesAreTypedErrors() throws {
        try Self.withDirectory(["first.sql": "SELECT 1;"]) { directory in
            #expect(throws: PostgresStoreError.self) { try Migration.load(from: directory) }
        }
        try Self.withDirectory(["0001_a.sql": "SELECT 1;", "1_b.sql": "SELECT 2;"]) { directory in
            #expect(throws: PostgresStoreError.self) { try Migration.load(from: directory) }
        }
    }

    @Test func aHostileSchemaNameIsQuotedEverywhere() throws {
        try TestDatabase.withSchema { url, base in
            let schema = base + "\"; DROP SCHEMA public; --"
            defer { try? TestDatabase.execute(url, "DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(schema)) CASCADE") }
            let migrator = try Migrator(url: url, schema: schema)
            #expect(try migrator.migrate(try Migration.load(from: TestDatabase.migrationsDirectory)).count == 2)
            let store = try PostgresStore(
                model: try ExampleModel.make(), configuration: try .init(url: url, schema: schema))
            defer { store.close() }
            let id = ManagedObjectID.temporary("Company")
            _ = try store.apply(ChangeSet(inserts: [ObjectChange(id: id, attributes: ["name": .string("x")])]))
            #expect(try store.fetch(FetchRequest(entityName: "Company")).count == 1)
        }
    }
}
