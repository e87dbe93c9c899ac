@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import LibPQ
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

    init(url: String, firstSchema: String) {
        self.url = url
        self.firstSchema = firstSchema
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
        let store = try PostgresStore(
            model: ExampleModel.model,
            configuration: try .init(url: url, schema: schema).with {
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
