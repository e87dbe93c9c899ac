import Foundation
import LibPQ
import Testing

/// Access to the integration database named by `DATABASE_URL`.
///
/// Without `DATABASE_URL`, an integration test records an issue (fails) when `CI == "true"`, and is
/// otherwise skipped with a message on standard output.
enum TestDatabase {
    static var url: String? {
        guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else { return nil }
        return url
    }

    /// The database URL, or `nil` after failing (CI) or announcing the skip (local runs).
    static func urlOrSkip(_ test: String = #function) -> String? {
        if let url { return url }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("DATABASE_URL is not set, but CI=true: integration test \(test) cannot run")
        } else {
            print("LibPQTests: skipping \(test): DATABASE_URL is not set (run scripts/db-up.sh)")
        }
        return nil
    }

    /// Opens a connection whose `search_path` is a freshly created schema with a random name, runs `body`,
    /// and drops the schema (through a new connection if the test broke or closed its own).
    static func withSchema(
        _ test: String = #function, _ body: (_ connection: Connection, _ schema: String) throws -> Void
    ) throws {
        guard let url = urlOrSkip(test) else { return }
        let schema = "libpq_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let connection = try Connection(url)
        try connection.execute("CREATE SCHEMA \(quoted(schema)); SET search_path TO \(quoted(schema))")
        defer {
            if connection.isBroken, let cleaner = try? Connection(url) {
                try? cleaner.execute("DROP SCHEMA IF EXISTS \(quoted(schema)) CASCADE")
                cleaner.close()
            } else {
                try? connection.execute("ROLLBACK; DROP SCHEMA IF EXISTS \(quoted(schema)) CASCADE")
            }
            connection.close()
        }
        try body(connection, schema)
    }

    /// A second connection to the same database, with `search_path` set to `schema`.
    static func connect(schema: String) throws -> Connection {
        let connection = try Connection(try #require(url))
        try connection.execute("SET search_path TO \(quoted(schema))")
        return connection
    }

    static func quoted(_ identifier: String) -> String { Connection.quoteIdentifier(identifier) }
}
