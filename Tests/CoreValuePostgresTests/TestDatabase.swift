import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// Access to the test server: `DATABASE_URL`, one fresh schema per test, dropped afterwards.
///
/// Without `DATABASE_URL` a test is skipped with a printed message, unless `CI == "true"`, where it fails.
enum TestDatabase {
    static var url: String? {
        guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// The repository's root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The repository's migrations directory.
    static var migrationsDirectory: URL { repositoryRoot.appendingPathComponent("migrations", isDirectory: true) }

    /// Runs `body` with the URL and a fresh, random schema name (the schema itself is not created); drops the
    /// schema afterwards. Records an issue (CI) or prints a skip message when there is no database.
    static func withSchema(_ function: String = #function, _ body: (_ url: String, _ schema: String) throws -> Void)
        throws
    {
        guard let url else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("DATABASE_URL is not set; integration test \(function) cannot run in CI")
            } else {
                print("skipped \(function): DATABASE_URL is not set (run scripts/db-up.sh and export it)")
            }
            return
        }
        let schema = "cvtest_" + UUID().uuidString.prefix(8).lowercased()
        defer {
            if let connection = try? Connection(url) {
                try? connection.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(schema)) CASCADE")
                connection.close()
            }
        }
        try body(url, schema)
    }

    /// Runs `body` with a store on a fresh schema migrated to the example model.
    static func withExampleStore(
        _ function: String = #function, poolSize: Int = 4,
        _ body: (PostgresStore, _ url: String, _ schema: String) throws -> Void
    ) throws {
        try withSchema(function) { url, schema in
            _ = try Migrator(url: url, schema: schema).migrate(try Migration.load(from: migrationsDirectory))
            let store = try PostgresStore(url: url, model: try ExampleModel.make(), schema: schema, poolSize: poolSize)
            defer { store.close() }
            try body(store, url, schema)
        }
    }

    /// Runs SQL on a connection of its own.
    static func execute(_ url: String, _ sql: String) throws {
        let connection = try Connection(url)
        defer { connection.close() }
        try connection.execute(sql)
    }
}
