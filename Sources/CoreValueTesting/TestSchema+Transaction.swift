@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ
import Synchronization

extension TestSchema {
    /// Runs `body` inside one transaction on a schema the process's tests share, migrated once, and rolls the
    /// transaction back afterwards, also when `body` throws: Ecto's SQL sandbox, for tests that want the same
    /// tables and speed.
    ///
    /// ```swift
    /// @Test(.enabled(if: TestSchema.isAvailable)) func renamesAPerson() throws {
    ///     try TestSchema.withTransaction(model: model) { schema in
    ///         let context = ManagedObjectContext(store: schema.store)
    ///         var alice = Person(name: "Alice", age: 34)
    ///         try alice.save(context)
    ///         // ... nothing of it is left after the test
    ///     }
    /// }
    /// ```
    ///
    /// The schema is `cvtest_tx_` and a fingerprint of the model's DDL (or of the migration files), so each
    /// model (each version of it) has its own; it is migrated on the first call of the process and kept
    /// (a server of the process's own goes with the process; on `DATABASE_URL`'s server, drop old `cvtest_tx_`
    /// schemas whenever no tests run). The store works on one connection whose transaction never commits: its
    /// saves become savepoints (a failed save rolls back its own, and the test goes on), each call runs under
    /// a savepoint as well (a failed read leaves the transaction usable), and calls from several tasks take
    /// turns on the connection. What the test saves is visible to it alone: other sandboxes, running in
    /// parallel, see none of it.
    ///
    /// It cannot do what needs a commit or a second connection, and says so:
    /// - `makeChangeListener()`, `makeHistoryListener(after:)` and reading history throw
    ///   `PostgresStoreError` with code `sandboxed`; a save's `NOTIFY` is never delivered.
    /// - Another connection (a second store, a `Connection`, another process) sees none of the test's rows,
    ///   and waits until the test ends for a row the test wrote or a unique value it holds: give each test
    ///   unique values of its own, since parallel sandboxes wait for each other on them.
    /// - A store call from inside another of the same thread (a streamed save's producer, an event handler)
    ///   throws `sandboxed`; one from the loop of a stream being iterated waits for the stream to end
    ///   (`poolTimeout` after the configuration's `checkoutTimeout`).
    /// - A lost connection ends the sandbox: later calls throw `sandboxed`.
    /// - Behind pgbouncer in transaction mode, each sandbox holds a server connection for its whole test.
    /// - Isolation is the transaction's read committed: the store's repeatable-read reads are savepoints in it.
    ///
    /// Use ``with(model:migrations:configure:_:)-7nn7m`` (a schema per test) for those.
    ///
    /// - Parameters:
    ///   - model: The model the store is opened with.
    ///   - migrations: A directory of migration files to apply to the shared schema; `nil` applies the DDL
    ///     derived from the model (with the history tables when `configure` sets `recordsHistory`).
    ///   - schema: The schema to work in instead of the fingerprinted one (migrated the same way).
    ///   - configure: Changes to the store's configuration; `schema` and `connection` are set for you, and the
    ///     pool size is 1.
    ///   - body: The test, given the schema and its store.
    /// - Throws: ``TestSchemaError`` without a server; migration and connection errors; what `body` throws.
    public static func withTransaction<T>(
        model: ManagedObjectModel, migrations: URL? = nil, schema: String? = nil,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (TestSchema) throws -> T
    ) throws -> T {
        let (opened, sandbox) = try openSandbox(model, migrations, schema, configure)
        defer { end(opened, sandbox) }
        return try body(opened)
    }

    /// Runs `body` (async) inside one transaction on a schema the process's tests share, migrated once, and
    /// rolls the transaction back afterwards, also when `body` throws. See the synchronous form.
    ///
    /// - Throws: As the synchronous form: ``TestSchemaError`` without a server; migration and connection
    ///   errors; what `body` throws.
    public static func withTransaction<T>(
        model: ManagedObjectModel, migrations: URL? = nil, schema: String? = nil,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (TestSchema) async throws -> T
    ) async throws -> T {
        let (opened, sandbox) = try openSandbox(model, migrations, schema, configure)
        defer { end(opened, sandbox) }
        return try await body(opened)
    }

    private static func openSandbox(
        _ model: ManagedObjectModel, _ migrations: URL?, _ schema: String?,
        _ configure: (inout PostgresStore.Configuration) -> Void
    ) throws -> (TestSchema, TransactionSandbox) {
        let url = try serverURL()
        var configuration = try PostgresStore.Configuration(url: url)
        configure(&configuration)
        configuration.connection = try ConnectionConfiguration(url)
        let files = try migrations.map { try Migration.load(from: $0) }
        let recordsHistory = configuration.recordsHistory
        let fingerprint = SharedSchemas.fingerprint(model, files, recordsHistory: recordsHistory)
        let name = schema ?? "cvtest_tx_" + fingerprint
        configuration.schema = name
        try SharedSchemas.migrate(url, name, fingerprint, model, files, recordsHistory: recordsHistory)
        let sandbox = try TransactionSandbox(
            configuration: configuration.connection,
            statementCacheCapacity: configuration.preparedStatementCacheSize,
            waitTimeout: configuration.checkoutTimeout)
        do {
            let store = try PostgresStore(model: model, configuration: configuration, sandbox: sandbox)
            return (TestSchema(url: url, name: name, store: store), sandbox)
        } catch {
            sandbox.rollBack()
            throw error
        }
    }

    /// Rolls back (after any call still running), then closes the store.
    private static func end(_ schema: TestSchema, _ sandbox: TransactionSandbox) {
        sandbox.rollBack()
        schema.store.close()
    }
}

/// The schemas `withTransaction` shares, each migrated once per process.
private enum SharedSchemas {
    /// The schemas migrated so far, by server, name and fingerprint.
    static let migrated = Mutex<Set<String>>([])

    /// Migrates the schema unless this process did already. Two tests migrating it at once are serialised by
    /// the migrator's advisory lock, and the second finds nothing to do.
    static func migrate(
        _ url: String, _ name: String, _ fingerprint: String, _ model: ManagedObjectModel, _ files: [Migration]?,
        recordsHistory: Bool
    ) throws {
        let key = [url, name, fingerprint].joined(separator: "\n")
        guard !migrated.withLock({ $0.contains(key) }) else { return }
        let migrator = try Migrator(url: url, schema: name)
        if let files {
            _ = try migrator.migrate(files)
        } else {
            _ = try migrator.migrate(model: model, recordsHistory: recordsHistory)
        }
        migrated.withLock { _ = $0.insert(key) }
    }

    /// FNV-1a (64 bits) of the model's DDL or of the files' versions, names and checksums, in hexadecimal:
    /// stable across processes (unlike `Hasher`), so a server keeps one schema per model version.
    static func fingerprint(_ model: ManagedObjectModel, _ files: [Migration]?, recordsHistory: Bool) -> String {
        let text =
            files.map { $0.map { "\($0.version) \($0.name) \($0.checksum)\n" }.joined() }
            ?? SchemaPrinter(model: model, recordsHistory: recordsHistory).ddl
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
