@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ
import Synchronization

/// A schema of its own for one test, on the PostgreSQL server in `DATABASE_URL` (or one the process starts
/// itself, ``TestServer``), dropped afterwards.
///
/// ```swift
/// import CoreValueTesting
/// import Testing
///
/// @Test(.enabled(if: TestSchema.isAvailable)) func savesAPerson() async throws {
///     try await TestSchema.with(model: model) { schema in
///         let context = ManagedObjectContext(store: schema.store)
///         var alice = Person(name: "Alice", age: 34)
///         try await alice.save(context)
///         let people: [Person] = try await Person.query(context, predicate: nil)
///         #expect(people.count == 1)
///     }
/// }
/// ```
///
/// Each call creates a schema with a random name, migrates it (your migration files, or the DDL derived
/// from the model), opens a `PostgresStore` on it, runs the body, then closes the
/// store and drops the schema, also when the body throws. Tests can therefore run in parallel against one
/// server (the `docker compose` one, or any). It works the same from Swift Testing and XCTest, sync and
/// async. Without `DATABASE_URL` it starts a throwaway server of its own on first use from the PostgreSQL
/// binaries on the machine (``TestServer/shared()``), else, without binaries, in a `postgres:15` Docker
/// container when a `docker` command works (removed when the process exits; untested on the project's
/// machines, where no Docker engine runs); `COREVALUE_TEST_SERVER=off` turns both off. When there is no
/// server, it throws ``TestSchemaError``, which names the three ways, so a missing database fails a test
/// rather than passing it silently. Guard with ``isAvailable`` to skip instead.
///
/// Tests that share the same tables can run faster in a transaction rolled back at the end, on one schema
/// migrated once: ``withTransaction(model:migrations:schema:configure:_:)-2ltuh``.
public struct TestSchema: Sendable {
    /// The server's connection string.
    public let url: String
    /// The schema's name: `cvtest_` and eight random characters, or in a transaction sandbox the shared
    /// schema's (`cvtest_tx_` and the model's fingerprint).
    public let name: String
    /// A store on the schema, for the model given (in a transaction sandbox, one on the sandbox's connection).
    public let store: PostgresStore

    /// A schema name of its own, with nothing created yet and no store: what ``withEmpty(_:)-88yv4`` gives.
    public struct Empty: Sendable {
        /// The server's connection string.
        public let url: String
        /// The schema's name (`cvtest_` and eight random characters).
        public let name: String
    }

    /// The environment variable that names the server.
    public static let environmentVariable = "DATABASE_URL"

    /// The environment variable that turns the server of its own off (`off`): without `DATABASE_URL`, no
    /// server then.
    public static let serverSwitch = "COREVALUE_TEST_SERVER"

    /// The server's connection string: `DATABASE_URL`, else the one of the server this process started
    /// (starting it on first use); `nil` when there is neither.
    public static var url: String? { try? serverURL() }

    /// Whether there is a server: `DATABASE_URL` is set, or one could be started (for `.enabled(if:)` or
    /// `XCTSkipUnless`).
    public static var isAvailable: Bool { url != nil }

    /// `DATABASE_URL`, else a server of the process's own (``TestServer/shared()``, or Docker's).
    ///
    /// - Throws: ``TestSchemaError`` saying why there is no server.
    static func serverURL() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment[environmentVariable], !url.isEmpty { return url }
        guard environment[serverSwitch] != "off" else {
            throw TestSchemaError(reason: "\(serverSwitch)=off, so no server of its own is started")
        }
        return try ownServer.withLock { state in
            if let state { return try state.get() }
            let found = Result { try startOwnServer() }
            state = found
            return try found.get()
        }
    }

    /// Which server of its own the process uses, decided once (looking for binaries and asking Docker spawn
    /// programs, which every test's `isAvailable` would otherwise repeat).
    private static let ownServer = Mutex<Result<String, any Error>?>(nil)

    /// A server from PostgreSQL's binaries when they are installed, else a Docker container when a `docker`
    /// command works.
    private static func startOwnServer() throws -> String {
        if TestServer.canStart {
            do {
                return try TestServer.shared().url
            } catch {
                throw TestSchemaError(reason: "no server could be started from PostgreSQL's binaries: \(error)")
            }
        }
        guard let docker = DockerServer.command() else {
            throw TestSchemaError(reason: "there are no PostgreSQL server binaries and no working `docker` command")
        }
        do {
            return try DockerServer.shared(docker: docker).url
        } catch {
            throw TestSchemaError(
                reason: "there are no PostgreSQL server binaries, and no \(DockerServer.image) container could be "
                    + "started: \(error)")
        }
    }

    /// Runs `body` with a fresh schema migrated for `model` and a store on it, then drops the schema.
    ///
    /// - Parameters:
    ///   - model: The model the store is opened with.
    ///   - migrations: A directory of migration files (see `Migration.load(from:)`) to apply; `nil` applies
    ///     the DDL derived from the model (`Migrator.migrate(model:)`).
    ///   - configure: Changes to the store's configuration (pool size, event hook, ...); `schema` and
    ///     `connection` are set for you.
    ///   - body: The test, given the schema and its store.
    /// - Throws: ``TestSchemaError`` without a server; migration and connection errors; what `body` throws.
    public static func with<T>(
        model: ManagedObjectModel, migrations: URL? = nil,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (TestSchema) throws -> T
    ) throws -> T {
        try withEmpty { empty in
            let store = try open(empty, model: model, migrations: migrations, configure: configure)
            defer { store.close() }
            return try body(TestSchema(url: empty.url, name: empty.name, store: store))
        }
    }

    /// Runs `body` with a fresh schema migrated for `model` and a store on it, then drops the schema.
    ///
    /// - Throws: As the synchronous form: ``TestSchemaError`` without `DATABASE_URL`; migration and
    ///   connection errors; what `body` throws.
    public static func with<T>(
        model: ManagedObjectModel, migrations: URL? = nil,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        try await withEmpty { empty in
            let store = try open(empty, model: model, migrations: migrations, configure: configure)
            defer { store.close() }
            return try await body(TestSchema(url: empty.url, name: empty.name, store: store))
        }
    }

    /// Runs `body` with the URL and a fresh schema name (nothing created yet, no store), then drops the
    /// schema if `body` created it.
    ///
    /// - Throws: ``TestSchemaError`` without `DATABASE_URL`; what `body` throws.
    public static func withEmpty<T>(_ body: (Empty) throws -> T) throws -> T {
        let empty = try makeEmpty()
        defer { drop(empty) }
        return try body(empty)
    }

    /// Runs `body` (async) with the URL and a fresh schema name (nothing created yet, no store), then drops
    /// the schema if `body` created it.
    ///
    /// - Throws: As the synchronous form: ``TestSchemaError`` without `DATABASE_URL`; what `body` throws.
    public static func withEmpty<T>(_ body: (Empty) async throws -> T) async throws -> T {
        let empty = try makeEmpty()
        defer { drop(empty) }
        return try await body(empty)
    }

    private static func makeEmpty() throws -> Empty {
        Empty(url: try serverURL(), name: "cvtest_" + UUID().uuidString.prefix(8).lowercased())
    }

    private static func open(
        _ empty: Empty, model: ManagedObjectModel, migrations: URL?,
        configure: (inout PostgresStore.Configuration) -> Void
    ) throws -> PostgresStore {
        let migrator = try Migrator(url: empty.url, schema: empty.name)
        if let migrations {
            _ = try migrator.migrate(try Migration.load(from: migrations))
        } else {
            _ = try migrator.migrate(model: model)
        }
        var configuration = try PostgresStore.Configuration(url: empty.url, schema: empty.name)
        configure(&configuration)
        // The schema just made and migrated, whatever `configure` did.
        configuration.schema = empty.name
        configuration.connection = try ConnectionConfiguration(empty.url)
        return try PostgresStore(model: model, configuration: configuration)
    }

    /// Drops the schema and everything in it; a failure to connect is ignored (the test has its own result).
    private static func drop(_ schema: Empty) {
        guard let connection = try? Connection(schema.url) else { return }
        defer { connection.close() }
        try? connection.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(schema.name)) CASCADE")
    }
}

/// There is no server to make a schema on: `DATABASE_URL` is not set, and none could be started.
public struct TestSchemaError: Error, CustomStringConvertible {
    /// Why no server could be started.
    public var reason: String

    /// What went wrong, and the three ways to a server, in the order they are tried.
    public var description: String {
        "\(TestSchema.environmentVariable) is not set and \(reason). Integration tests find a PostgreSQL server "
            + "in this order: (1) DATABASE_URL, pointing at any server (for example `docker compose up -d` and "
            + "postgresql://corevalue@127.0.0.1:54320/corevalue); (2) PostgreSQL's server binaries (initdb, "
            + "pg_ctl; Debian: apt-get install postgresql), found through COREVALUE_PG_BIN, pg_config --bindir "
            + "or the usual places, from which a throwaway server is started; (3) a working `docker` command "
            + "(COREVALUE_DOCKER names another executable), which runs a throwaway \(DockerServer.image) container"
    }
}
