import Foundation
import CoreValueTesting
import LibPQ
import Testing

/// Access to the integration database named by `DATABASE_URL`, through `CoreValueTesting`'s ``TestSchema``.
///
/// Without `DATABASE_URL`, an integration test records an issue (fails) when `CI == "true"`, and is
/// otherwise skipped with a message on standard output.
enum TestDatabase {
    static var url: String? { TestSchema.url }

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
    /// and drops the schema (after closing the connection, which ends any transaction the test left open).
    static func withSchema(
        _ test: String = #function, _ body: (_ connection: Connection, _ schema: String) throws -> Void
    ) throws {
        guard urlOrSkip(test) != nil else { return }
        try TestSchema.withEmpty { schema in
            let connection = try Connection(schema.url)
            defer { connection.close() }
            try connection.execute("CREATE SCHEMA \(quoted(schema.name)); SET search_path TO \(quoted(schema.name))")
            try body(connection, schema.name)
        }
    }

    /// A second connection to the same database, with `search_path` set to `schema`.
    static func connect(schema: String) throws -> Connection {
        let connection = try Connection(try #require(url))
        try connection.execute("SET search_path TO \(quoted(schema))")
        return connection
    }

    static func quoted(_ identifier: String) -> String { Connection.quoteIdentifier(identifier) }
}
