@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
import Synchronization
import Testing

/// The store-generic behaviour suite of CoreValueTests (`BehaviourSuite/` and `BehaviourSupport/` are links to
/// its `Suite/` and `Support/` folders), run against `PostgresStore` through both APIs: one suite, two stores,
/// two APIs.
///
/// Each store the suite asks for lives in a fresh schema migrated to the example model; the schemas are
/// dropped when the case ends.
@Test(arguments: StoreSuite.all, APIMode.allCases)
func postgresStoreBehaviour(_ check: SuiteCase, _ api: APIMode) async throws {
    guard TestDatabase.isAvailable("postgresStoreBehaviour(\(check.name))") else { return }
    try await TestSchema.withEmpty { schema in
        let stores = StoreFactoryRecord(url: schema.url, firstSchema: schema.name)
        defer { stores.closeAndDrop() }
        try await check.run({ try stores.make() }, api)
    }
}

/// The behaviour suite once more with every store opened as an application role that has only the GRANTs
/// `SchemaPrinter.grants(to:)` prints (issue 33: least privilege), the schemas migrated by their owner.
/// Through the synchronous API (the async one reaches the same statements).
@Test(arguments: StoreSuite.all)
func postgresStoreBehaviourAsApplicationRole(_ check: SuiteCase) async throws {
    guard TestDatabase.isAvailable("postgresStoreBehaviourAsApplicationRole(\(check.name))") else { return }
    try await TestSchema.withEmpty { schema in
        let role = try StoreFactoryRecord.applicationRole(schema.url)
        let stores = StoreFactoryRecord(url: schema.url, firstSchema: schema.name, role: role)
        defer { stores.closeAndDrop() }
        try await check.run({ try stores.make() }, .sync)
    }
}

/// The behaviour suite once more with every store inside a transaction sandbox of its own
/// (`TestSchema.withTransaction`'s sessions): the store's transactions are savepoints there, its `COMMIT`
/// never goes with a last statement, a stream's cursor outlives its savepoint, and nothing commits. The stores
/// of one case share a fresh schema, each in its own uncommitted transaction, so each sees only its own rows,
/// as in a schema of its own. Not one schema for every case: cases running in parallel save the same unique
/// values, and a sandbox waits for another's until that one rolls back.
@Test(arguments: StoreSuite.all, APIMode.allCases)
func postgresStoreBehaviourInTransactionSandboxes(_ check: SuiteCase, _ api: APIMode) async throws {
    guard TestDatabase.isAvailable("postgresStoreBehaviourInTransactionSandboxes(\(check.name))") else { return }
    try await TestSchema.withEmpty { schema in
        _ = try await Migrator(url: schema.url, schema: schema.name).migrate(
            try Migration.load(from: TestDatabase.migrationsDirectory))
        let sandboxes = Mutex<[TransactionSandbox]>([])
        defer { sandboxes.withLock { $0 }.forEach { $0.rollBack() } }
        try await check.run(
            {
                let configuration = try PostgresStore.Configuration(url: schema.url, schema: schema.name)
                let sandbox = try TransactionSandbox(
                    configuration: configuration.connection,
                    statementCacheCapacity: configuration.preparedStatementCacheSize,
                    waitTimeout: configuration.checkoutTimeout)
                sandboxes.withLock { $0.append(sandbox) }
                return try PostgresStore(model: ExampleModel.model, configuration: configuration, sandbox: sandbox)
            }, api)
    }
}

/// The history suite against `PostgresStore`, through both APIs: each store in a fresh schema migrated
/// with the history tables.
@Test(arguments: HistorySuite.cases, APIMode.allCases)
func postgresStoreHistory(_ check: HistoryCase, _ api: APIMode) async throws {
    guard TestDatabase.isAvailable("postgresStoreHistory(\(check.name))") else { return }
    try await TestSchema.withEmpty { schema in
        let stores = StoreFactoryRecord(url: schema.url, firstSchema: schema.name)
        defer { stores.closeAndDrop() }
        try await check.run({ try stores.make(recordsHistory: true, author: $0) }, api)
    }
}

/// Makes the stores of one behaviour case and cleans up after them.
private final class StoreFactoryRecord: @unchecked Sendable {
    // The suite calls the factory on the test's own thread; the lock only guards against a case that
    // makes stores from several threads.
    private let lock = NSLock()
    private let url: String
    private let firstSchema: String
    private var stores: [PostgresStore] = []
    private var schemas: [String] = []

    /// The role stores are opened as (with the schema's GRANTs), or `nil`: the URL's own (superuser) role.
    private let role: String?

    init(url: String, firstSchema: String, role: String? = nil) {
        self.url = url
        self.firstSchema = firstSchema
        self.role = role
    }

    /// A login role without rights of its own, made once per cluster (trust authentication on the test
    /// cluster); each store's schema grants it what `SchemaPrinter.grants(to:)` prints.
    static func applicationRole(_ url: String) throws -> String {
        let role = "corevalue_behaviour_app"
        try TestDatabase.execute(
            url,
            """
            DO $$ BEGIN
                CREATE ROLE \(SQLIdentifier.quote(role)) LOGIN NOSUPERUSER;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$;
            """)
        return role
    }

    /// A store in a fresh schema: migrated from the example migration files, or with `recordsHistory` from
    /// the model with the history tables.
    func make(recordsHistory: Bool = false, author: String? = nil) throws -> PostgresStore {
        let schema = lock.withLock { () -> String in
            let schema = schemas.isEmpty ? firstSchema : "cvtest_" + UUID().uuidString.prefix(8).lowercased()
            schemas.append(schema)
            return schema
        }
        let migrator = try Migrator(url: url, schema: schema)
        if recordsHistory {
            try migrator.migrate(model: ExampleModel.model, recordsHistory: true)
        } else {
            _ = try migrator.migrate(try Migration.load(from: TestDatabase.migrationsDirectory))
        }
        var storeURL = url
        if let role {
            let printer = SchemaPrinter(model: ExampleModel.model, schema: schema, recordsHistory: recordsHistory)
            try TestDatabase.execute(url, printer.grants(to: role))
            storeURL = try LeastPrivilegeTests.url(url, user: role)
            // The role is what the stores run as, and it cannot change the schema.
            let probe = try Connection(storeURL)
            defer { probe.close() }
            #expect(try probe.query("SELECT current_user::text").decode(String.self, row: 0, column: 0) == role)
            #expect(throws: DatabaseError.self) {
                try probe.execute("CREATE TABLE \(SQLIdentifier.quote(schema)).cv_probe (x int)")
            }
        }
        let store = try PostgresStore(
            model: ExampleModel.model,
            configuration: try .init(url: storeURL, schema: schema).with {
                $0.poolSize = 2
                $0.recordsHistory = recordsHistory
                $0.historyAuthor = author
            })
        lock.withLock { stores.append(store) }
        return store
    }

    /// Closes every store and drops every schema but the first (which `withSchema` drops).
    func closeAndDrop() {
        let (stores, schemas) = lock.withLock { (self.stores, self.schemas.dropFirst()) }
        stores.forEach { $0.close() }
        guard !schemas.isEmpty, let connection = try? Connection(url) else { return }
        defer { connection.close() }
        for schema in schemas {
            try? connection.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(schema)) CASCADE")
        }
    }
}
