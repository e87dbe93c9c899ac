@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// Access to the test server through `CoreValueTesting`'s ``TestSchema``: `DATABASE_URL`, one fresh schema per
/// test, dropped afterwards.
///
/// Without a server (`DATABASE_URL` unset and none of its own started) a test is skipped with a printed message,
/// unless `CI == "true"`, where it fails.
enum TestDatabase {
    static var url: String? { TestSchema.url }

    /// `CV_TEST_STATEMENT_CACHE`: the prepared-statement cache size of the stores `withExampleStore` opens
    /// (`make test-ha` sets 0 through pgbouncer, as the docs advise); `nil`: the configuration's default.
    static var statementCacheSize: Int? {
        ProcessInfo.processInfo.environment["CV_TEST_STATEMENT_CACHE"].flatMap { Int($0) }
    }

    /// The repository's root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The repository's migrations directory.
    static var migrationsDirectory: URL { repositoryRoot.appendingPathComponent("migrations", isDirectory: true) }

    /// Whether there is a server; records an issue (CI) or prints a skip message when there is none.
    static func isAvailable(_ function: String) -> Bool {
        if TestSchema.isAvailable { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("DATABASE_URL is not set; integration test \(function) cannot run in CI")
        } else {
            print(
                "skipped \(function): no server (DATABASE_URL unset, and none of its own: \(TestSchema.serverSwitch)=off, or neither binaries nor Docker)"
            )
        }
        return false
    }

    /// Runs `body` with the URL and a fresh, random schema name (the schema itself is not created); drops the
    /// schema afterwards.
    /// Runs `body` on a `MemoryStore` of `model` and, when there is a server, on a `PostgresStore` in a fresh
    /// schema: a behaviour the two stores must share, checked with the same expectations.
    static func onBothStores(
        model: ManagedObjectModel, _ function: String = #function, _ body: (any Store) throws -> Void
    ) throws {
        try body(MemoryStore(model: model))
        guard isAvailable(function) else { return }
        try TestSchema.with(model: model) { schema in try body(schema.store) }
    }

    static func withSchema(_ function: String = #function, _ body: (_ url: String, _ schema: String) throws -> Void)
        throws
    {
        guard isAvailable(function) else { return }
        try TestSchema.withEmpty { try body($0.url, $0.name) }
    }

    /// Runs `body` with a store on a fresh schema migrated to the example model.
    static func withExampleStore(
        _ function: String = #function, poolSize: Int = 4,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (PostgresStore, _ url: String, _ schema: String) throws -> Void
    ) throws {
        guard isAvailable(function) else { return }
        try TestSchema.with(model: try ExampleModel.make(), migrations: migrationsDirectory) {
            $0.poolSize = poolSize
            if let size = statementCacheSize { $0.preparedStatementCacheSize = size }
            configure(&$0)
        } _: { schema in
            try body(schema.store, schema.url, schema.name)
        }
    }

    /// Runs `body` (async) with a store on a fresh schema migrated to the example model.
    static func withExampleStore(
        _ function: String = #function, configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (PostgresStore, _ url: String, _ schema: String) async throws -> Void
    ) async throws {
        guard isAvailable(function) else { return }
        try await TestSchema.with(model: try ExampleModel.make(), migrations: migrationsDirectory) {
            if let size = statementCacheSize { $0.preparedStatementCacheSize = size }
            configure(&$0)
        } _: { schema in
            try await body(schema.store, schema.url, schema.name)
        }
    }

    /// A trigger that makes every insert into the example model's `Author` table sleep for `seconds`; drop it
    /// with `DROP TRIGGER cv_slow ON <table>`.
    static func makeAuthorInsertsSleep(_ url: String, _ schema: String, seconds: Double) throws {
        let table = SQLIdentifier("Author", schema: schema).quoted
        let function = SQLIdentifier("cv_slow", schema: schema).quoted
        try execute(
            url,
            """
            CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM pg_sleep(\(seconds)); RETURN NEW; END $$;
            CREATE TRIGGER cv_slow BEFORE INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION \(function)();
            """)
    }

    /// Whether a backend sleeps in a statement that names `schema` (other tests sleep too).
    static func isSleeping(_ url: String, inStatementOn schema: String) throws -> Bool {
        let connection = try Connection(url)
        defer { connection.close() }
        let active = try connection.query(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND strpos(query, $1) > 0",
            [try PostgresValue(schema)])
        return try active.decode(Int64.self, row: 0, column: 0) > 0
    }

    /// Runs SQL on a connection of its own.
    static func execute(_ url: String, _ sql: String) throws {
        let connection = try Connection(url)
        defer { connection.close() }
        try connection.execute(sql)
    }
}
