import CoreValue
import Foundation
import LibPQ

/// A `Store` (from `CoreValue`) that keeps a model's objects in PostgreSQL.
///
/// ```swift
/// let store = try PostgresStore(url: "postgresql://localhost/app", model: model, schema: "app")
/// let rows = try store.fetch(FetchRequest(entityName: "Car", predicate: .key("doors") > 2))
/// ```
///
/// Every call sends a fixed number of statements whatever the number of rows: a fetch sends one statement
/// for its rows and one per relationship loaded separately; an apply sends, in one transaction, one
/// statement per entity and kind of write, and two per owning to-many relationship changed. All values are
/// bound; all identifiers are quoted and, when a schema is given, qualified with it. The store is
/// `Sendable`: it keeps a pool of connections and uses one per call.
public final class PostgresStore: Store {
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    /// The schema the tables live in, or `nil` for the connection's search path.
    public let schema: String?
    /// How many times a transaction that failed with a serialization failure or deadlock is tried in all.
    public let maxAttempts: Int
    /// The channel each committed save announces its changes on (see ``ChangeListener``), or `nil`.
    public let notificationChannel: String?
    /// Whether the store only reads (a standby, or a replica behind `target_session_attrs=prefer-standby`):
    /// ``apply(_:)`` throws ``PostgresStoreError/Code/readOnlyStore`` before sending anything.
    public let isReadOnly: Bool
    /// Where the store connects (the password redacted in descriptions).
    public let configuration: ConnectionConfiguration
    let mapping: SchemaMapping
    /// The model's lookups, for the checks shared with `MemoryStore`.
    let index: ModelIndex
    let fetchStatements: FetchStatements
    let writeStatements: WriteStatements
    let pool: ConnectionPool
    let counter = StatisticsCounter()
    /// The threads that run the blocking work of async calls (``runBlocking(_:)``).
    let executor: BlockingExecutor

    /// Opens a store on a database, checking that its tables match the model.
    ///
    /// - Parameters:
    ///   - configuration: Where to connect.
    ///   - model: The model whose tables the database holds.
    ///   - schema: The schema of the tables; `nil` uses the search path.
    ///   - poolSize: The largest number of connections open at once.
    ///   - maxAttempts: How many times a transaction is tried when it fails with 40001 or 40P01.
    ///   - verifySchema: Whether to compare the database with the model now.
    ///   - checkoutTimeout: How long a call waits for a free pooled connection before it throws
    ///     ``PostgresStoreError/Code/poolTimeout``.
    ///   - notificationChannel: When set, every committed save also sends one `NOTIFY` on this channel
    ///     (inside its transaction, one more statement) listing the rows it changed; see ``ChangeListener``.
    ///   - readOnly: Open a store that only fetches, for a hot standby: fetches run as they always do (in
    ///     read-only transactions when they take several statements) and saves are refused up front.
    /// - Throws: ``PostgresStoreError/Code/invalidModel`` for a model PostgreSQL cannot hold unchanged (names
    ///   over 63 bytes, clashing table names); ``PostgresStoreError/Code/schemaMismatch`` listing every
    ///   difference; the driver's connection errors; ``PostgresStoreError/Code/invalidConfiguration`` for a pool
    ///   size below 1, a timeout that is not positive, or a channel name that is empty or over 63 bytes.
    public init(
        configuration: ConnectionConfiguration, model: ManagedObjectModel, schema: String? = nil, poolSize: Int = 4,
        maxAttempts: Int = 5, verifySchema: Bool = true, checkoutTimeout: Duration = .seconds(30),
        notificationChannel: String? = nil, readOnly: Bool = false
    ) throws {
        if let notificationChannel { try ChangeListener.validate(channel: notificationChannel) }
        self.notificationChannel = notificationChannel
        self.isReadOnly = readOnly
        self.configuration = configuration
        self.model = model
        self.schema = schema
        self.maxAttempts = max(1, maxAttempts)
        self.mapping = SchemaMapping(model: model)
        self.index = ModelIndex(model)
        try mapping.validate()
        self.fetchStatements = FetchStatements(mapping: mapping, schema: schema)
        self.writeStatements = WriteStatements(schema: schema)
        self.pool = try ConnectionPool(
            configuration: configuration, capacity: poolSize, checkoutTimeout: checkoutTimeout)
        self.executor = BlockingExecutor(threadCount: poolSize, name: "CoreValuePostgres")
        if verifySchema { try verify() }
    }

    deinit {
        executor.stop()
    }

    /// Opens a store on a database given by a URL or `key=value` connection string.
    ///
    /// - Throws: As
    ///   ``init(configuration:model:schema:poolSize:maxAttempts:verifySchema:checkoutTimeout:notificationChannel:readOnly:)``,
    ///   and the driver's error for a malformed connection string.
    public convenience init(
        url: String, model: ManagedObjectModel, schema: String? = nil, poolSize: Int = 4, maxAttempts: Int = 5,
        verifySchema: Bool = true, checkoutTimeout: Duration = .seconds(30), notificationChannel: String? = nil,
        readOnly: Bool = false
    ) throws {
        try self.init(
            configuration: try ConnectionConfiguration(url), model: model, schema: schema, poolSize: poolSize,
            maxAttempts: maxAttempts, verifySchema: verifySchema, checkoutTimeout: checkoutTimeout,
            notificationChannel: notificationChannel, readOnly: readOnly)
    }

    /// A listener on this store's ``notificationChannel``, with a connection of its own.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidConfiguration`` when the store has no channel; the driver's
    ///   connection errors.
    public func makeChangeListener() throws -> ChangeListener {
        guard let notificationChannel else {
            throw PostgresStoreError(
                .invalidConfiguration, "the store was opened without a notificationChannel; nothing to listen to")
        }
        return try ChangeListener(configuration: configuration, channel: notificationChannel)
    }

    /// The counters of the work done so far.
    public var statistics: StoreStatistics { counter.current }

    /// Compares the database's tables with the model.
    ///
    /// - Throws: ``PostgresStoreError/Code/schemaMismatch`` listing every missing table or column, wrong type
    ///   and wrong nullability, in one error.
    public func verify() throws {
        try pool.withConnection { connection in
            try SchemaVerifier(mapping: mapping, schema: schema).verify(on: connection)
        }
    }

    /// Closes the pool's idle connections; later calls throw.
    public func close() {
        pool.close()
    }

    /// Runs the blocking work of an async call on one of the store's threads (as many as its pool has
    /// connections), never on the caller's: no thread of Swift's cooperative pool waits on the server.
    public func runBlocking(_ work: @escaping @Sendable () -> Void) {
        executor.submit(work)
    }

    /// Runs `body` with a connection, counting its statements.
    ///
    /// In the blocking work of an async call (``CancellationToken/current`` is set), a cancelled call throws
    /// `CancellationError` before each statement, and a cancellation while a statement runs asks the server to
    /// cancel it; the statement's error (57014) is then thrown as `CancellationError`. The transaction is
    /// rolled back either way and the connection goes back to the pool.
    func withRunner<T>(_ body: (StatementRunner) throws -> T) throws -> T {
        guard let token = CancellationToken.current else {
            return try pool.withConnection { connection in
                try body(StatementRunner(connection: connection, counter: counter))
            }
        }
        try token.checkCancellation()
        do {
            return try pool.withConnection { connection in
                let canceller = try connection.makeCanceller()
                return try token.whileRunning(onCancel: { try? canceller.cancel() }) {
                    try body(StatementRunner(connection: connection, counter: counter, cancellation: token))
                }
            }
        } catch let error as DatabaseError where error.sqlState == .queryCanceled && token.isCancelled {
            throw CancellationError()
        }
    }
}
