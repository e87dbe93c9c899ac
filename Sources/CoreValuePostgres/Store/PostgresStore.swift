@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ
import Synchronization

/// A `Store` (from `CoreValue`) that keeps a model's objects in PostgreSQL.
///
/// ```swift
/// let configuration = try PostgresStore.Configuration(url: "postgresql://localhost/app", schema: "app")
/// let store = try PostgresStore(model: model, configuration: configuration)
/// let context = ManagedObjectContext(store: store)
/// let cars: [Car] = try Car.query(context, predicate: .key("doors") > 2)
/// ```
///
/// Every call sends a fixed number of statements whatever the number of rows: a fetch sends one statement
/// for its rows and their relationships' keys; an apply sends, in one transaction, one
/// statement per entity and kind of write, and two per owning to-many relationship changed. All values are
/// bound; all identifiers are quoted and, when a schema is given, qualified with it. The store is
/// `Sendable`: it keeps a pool of connections and uses one per call.
public final class PostgresStore: StoreRefinements {
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    /// What the store was opened with.
    public let configuration: Configuration
    /// The schema the tables live in, or `nil` for the connection's search path.
    public var schema: String? { configuration.schema }
    /// How many times a transaction that failed with a serialization failure or deadlock is tried in all.
    public var maxAttempts: Int { configuration.maxAttempts }
    /// The channel each committed save announces its changes on (see ``ChangeListener``), or `nil`.
    public var notificationChannel: String? { configuration.notificationChannel }
    /// Whether the store only reads (a standby, or a replica behind `target_session_attrs=prefer-standby`):
    /// `apply(_:)` throws ``PostgresStoreError/Code/readOnlyStore`` before sending anything.
    public var isReadOnly: Bool { configuration.readOnly }
    let mapping: SchemaMapping
    /// The model's lookups, for the checks shared with `MemoryStore`.
    let index: ModelIndex
    let fetchStatements: FetchStatements
    let readers: RowReaders
    let writeStatements: WriteStatements
    /// The statements that carry a one-row save's `COMMIT` with its commit identifier, by shape.
    let carryTemplates = StatementTemplates<CommitMarker.CarryShape>()
    let pool: ConnectionPool
    /// Where reads and writes get their connection: ``pool``, or a test's scripted sessions.
    let sessions: any SessionSource
    let counter = StatisticsCounter()
    /// Where ``Configuration/onEvent`` events go.
    let events: EventSink
    /// The threads that run the blocking work of async calls (``runBlocking(_:)``).
    let executor: BlockingExecutor
    /// The server's case mapping version, once read (see ``caseMappingVersion``).
    let serverCaseMapping = Mutex<Unicode.Version?>(nil)
    /// Where lost commits are looked up: new connections (scripted sessions in tests).
    let resolvingSessions: any SessionSource
    /// When old commit identifiers were last deleted (the store's opening, at first).
    let lastCommitPrune = Mutex(ContinuousClock.now)

    /// Opens a store on a database, checking that its tables match the model (unless
    /// ``Configuration/verifySchema`` is off).
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidModel`` for a model PostgreSQL cannot hold unchanged (names
    ///   over 63 bytes, clashing table names); ``PostgresStoreError/Code/schemaMismatch`` listing every
    ///   difference; ``PostgresStoreError/Code/driverError`` or ``PostgresStoreError/Code/serverError`` wrapping the
    ///   driver's or the server's error (a refused login, say); ``PostgresStoreError/Code/invalidConfiguration`` for a pool
    ///   size or `maxAttempts` below 1, a timeout that is not positive, or a channel name that is empty or over
    ///   63 bytes.
    public convenience init(model: ManagedObjectModel, configuration: Configuration) throws {
        try self.init(model: model, configuration: configuration, sessions: nil)
    }

    /// Opens a store whose reads and writes take their sessions from `sessions` (a test's scripted ones)
    /// instead of its pool; `nil`: the pool.
    init(model: ManagedObjectModel, configuration: Configuration, sessions: (any SessionSource)?) throws {
        try configuration.validate()
        self.configuration = configuration
        self.model = model
        self.mapping = SchemaMapping(
            model: model, recordsHistory: configuration.recordsHistory,
            resolvesCommits: configuration.resolvesCommitOutcomes && !configuration.readOnly)
        self.index = ModelIndex(model)
        try mapping.validate()
        self.fetchStatements = FetchStatements(mapping: mapping, schema: configuration.schema)
        self.readers = try RowReaders(mapping: mapping, index: index)
        self.writeStatements = WriteStatements(schema: configuration.schema)
        self.events = EventSink(handler: configuration.onEvent)
        self.pool = try ConnectionPool(
            configuration: configuration.connection, capacity: configuration.poolSize,
            checkoutTimeout: configuration.checkoutTimeout, maxLifetime: configuration.maxConnectionLifetime,
            statementCacheCapacity: configuration.preparedStatementCacheSize, events: events)
        self.sessions = sessions ?? pool
        self.resolvingSessions = sessions ?? DirectSessions(configuration: configuration.connection)
        // Scripted sessions have no server to ask.
        if sessions != nil { serverCaseMapping.withLock { $0 = MemoryStore.defaultCaseMappingVersion } }
        self.executor = BlockingExecutor(threadCount: configuration.poolSize, name: "CoreValuePostgres")
        if configuration.verifySchema, sessions == nil { try verify() }
    }

    /// The Unicode version whose lower-case mapping the server's case-insensitive matches (`ILIKE` under the
    /// ICU root collation) apply: that of the ICU PostgreSQL was built with, read when the store is opened
    /// (or, with ``Configuration/verifySchema`` off, on first use) by having the server lower-case one letter
    /// of each Unicode version since 11.0 that added lower-case mappings. Versions that added none are not
    /// told apart (they map the same letters): ICU 72 to 74 (Unicode 15.0 and 15.1) read as 15.1. A context
    /// matches its unsaved objects with the same mapping, and a `MemoryStore` made with this version matches
    /// as this server does. `MemoryStore.defaultCaseMappingVersion` until the server could be asked.
    ///
    /// A server that answers without saying (one built without ICU) is asked once; one that could not be
    /// reached is asked again next time.
    public var caseMappingVersion: Unicode.Version {
        if let known = serverCaseMapping.withLock({ $0 }) { return known }
        // Not `try?`, which would flatten "could not ask" and "asked, no answer" into one `nil`.
        let answer: Unicode.Version?
        do {
            answer = try pool.withConnection {
                try ServerCaseMapping.read(on: $0, keepingCollationIn: fetchStatements.caseCollation)
            }
        } catch {
            return MemoryStore.defaultCaseMappingVersion
        }
        let version = answer ?? MemoryStore.defaultCaseMappingVersion
        serverCaseMapping.withLock { $0 = version }
        return version
    }

    /// Opens a store on a database given by a URL or `key=value` connection string, with `configuration`'s
    /// other settings (its `connection` is replaced by the URL's).
    ///
    /// - Throws: As ``init(model:configuration:)``, and the driver's error for a malformed connection string.
    public convenience init(url: String, model: ManagedObjectModel, configuration: Configuration) throws {
        var configuration = configuration
        configuration.connection = try ConnectionConfiguration(url)
        try self.init(model: model, configuration: configuration)
    }

    deinit {
        executor.stop()
    }

    /// Opens a store on a database, checking that its tables match the model.
    ///
    /// The parameters are those of ``Configuration``, which ``init(model:configuration:)`` takes as one value.
    /// Deprecated: open a store from a ``Configuration`` (this initialiser goes before 1.0).
    ///
    /// - Throws: As ``init(model:configuration:)``.
    @available(*, deprecated, message: "use init(model:configuration:) with a PostgresStore.Configuration")
    public convenience init(
        configuration connection: ConnectionConfiguration, model: ManagedObjectModel, schema: String? = nil,
        poolSize: Int = 4, maxAttempts: Int = 5, verifySchema: Bool = true, checkoutTimeout: Duration = .seconds(30),
        notificationChannel: String? = nil, readOnly: Bool = false
    ) throws {
        var configuration = Configuration(connection: connection, schema: schema)
        configuration.poolSize = poolSize
        configuration.maxAttempts = maxAttempts
        configuration.verifySchema = verifySchema
        configuration.checkoutTimeout = checkoutTimeout
        configuration.notificationChannel = notificationChannel
        configuration.readOnly = readOnly
        try self.init(model: model, configuration: configuration)
    }

    /// Opens a store on a database given by a URL or `key=value` connection string. Deprecated: open a store
    /// from a ``Configuration`` (this initialiser goes before 1.0).
    ///
    /// - Throws: As ``init(model:configuration:)``, and the driver's error for a malformed connection string.
    @available(
        *, deprecated,
        message: "use init(model:configuration:) with PostgresStore.Configuration(url:schema:) and its properties"
    )
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
    /// - Throws: ``PostgresStoreError/Code/invalidConfiguration`` when the store has no channel;
    ///   ``PostgresStoreError/Code/sandboxed`` in a test's transaction sandbox; the driver's connection errors.
    public func makeChangeListener() throws -> ChangeListener {
        try requireCommits(for: "a ChangeListener")
        guard let notificationChannel else {
            throw PostgresStoreError(
                .invalidConfiguration, "the store was opened without a notificationChannel; nothing to listen to")
        }
        return try ChangeListener(
            configuration: configuration.listenConnection ?? configuration.connection, channel: notificationChannel)
    }

    /// The counters of the work done so far.
    public var statistics: StoreStatistics { counter.current }

    /// Compares the database's tables with the model.
    ///
    /// - Throws: ``PostgresStoreError/Code/schemaMismatch`` listing every missing table or column, wrong type
    ///   and wrong nullability, in one error.
    public func verify() throws {
        do {
            try pool.withConnection { connection in
                try SchemaVerifier(mapping: mapping, schema: schema).verify(on: connection)
                do {
                    let answer = try ServerCaseMapping.read(
                        on: connection, keepingCollationIn: fetchStatements.caseCollation)
                    serverCaseMapping.withLock { $0 = answer ?? MemoryStore.defaultCaseMappingVersion }
                } catch {
                    // Not asked (the connection went away): asked on first use, see ``caseMappingVersion``.
                }
            }
        } catch {
            throw PostgresStoreError.wrapping(error)
        }
    }

    /// Closes the pool's idle connections; later calls throw.
    public func close() {
        pool.close()
    }

    func runner(on connection: any DatabaseSession, cancellation: CancellationToken?) -> StatementRunner {
        StatementRunner(
            connection: connection, counter: counter, cancellation: cancellation, events: events,
            statementTimeout: configuration.statementTimeoutMilliseconds)
    }

    /// Runs `body` on a checked-out connection, adding the round trips the driver counted to the statistics.
    private func counted<T>(_ connection: any DatabaseSession, _ body: () throws -> T) rethrows -> T {
        let before = (connection.roundTrips, connection.statementsPrepared)
        defer {
            let trips = connection.roundTrips - before.0
            let prepared = connection.statementsPrepared - before.1
            counter.record {
                $0.roundTrips += trips
                $0.statementsPrepared += prepared
            }
        }
        return try body()
    }

    /// Runs `body` with a connection, counting its statements.
    ///
    /// In the blocking work of an async call (``CancellationToken/current`` is set), a cancelled call throws
    /// `CancellationError` before each statement, and a cancellation while a statement runs asks the server to
    /// cancel it; the statement's error (57014) is then thrown as `CancellationError`. The transaction is
    /// rolled back either way and the connection goes back to the pool.
    func withRunner<T>(_ body: (StatementRunner) throws -> T) throws -> T {
        guard let token = CancellationToken.current else {
            return try sessions.withSession { connection in
                try counted(connection) { try body(runner(on: connection, cancellation: nil)) }
            }
        }
        try token.checkCancellation()
        do {
            return try sessions.withSession { connection in
                let cancel = try connection.makeCancel()
                // PQcancel connects to the server and waits for it: on a thread of its own, never the cancelling
                // one (often one of the cooperative pool). `whileRunning` returns only once the request went
                // out, so the connection cannot go back to the pool and have the next caller's statement
                // cancelled.
                return try token.whileRunning(onCancelBlocking: cancel) {
                    try counted(connection) { try body(runner(on: connection, cancellation: token)) }
                }
            }
        } catch let error as DatabaseError where error.sqlState == .queryCanceled && token.isCancelled {
            throw CancellationError()
        }
    }
}

extension PostgresStore: ModelIndexSharing {
    package var sharedIndex: ModelIndex { index }
}
