@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

extension PostgresStore {
    /// Everything a store is opened with, with defaults for all but where to connect.
    ///
    /// ```swift
    /// var configuration = try PostgresStore.Configuration(url: "postgresql://localhost/app", schema: "app")
    /// configuration.poolSize = 8
    /// configuration.statementTimeout = .seconds(5)
    /// configuration.onEvent = { event in logger.debug("\(event)") }
    /// let store = try PostgresStore(model: model, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Where to connect: a URL or `key=value` string, parsed (the password is redacted in descriptions).
        public var connection: ConnectionConfiguration
        /// The schema the tables live in; `nil` uses the connection's search path.
        public var schema: String?
        /// The largest number of connections open at once (also the number of threads async calls use).
        public var poolSize = 4
        /// How long a call waits for a free pooled connection before it throws
        /// ``PostgresStoreError/Code/poolTimeout``.
        public var checkoutTimeout: Duration = .seconds(30)
        /// How many times a transaction is tried in all when it fails with a serialization failure (40001) or
        /// a deadlock (40P01).
        public var maxAttempts = 5
        /// How long work is retried, with backoff (50 ms doubling to 1 s), when the server cannot be reached
        /// or the connection breaks before `COMMIT` was sent: a restart, or a failover to a standby behind a
        /// multi-host URL with `target_session_attrs=read-write`. Such work never committed, so repeating it is
        /// safe. A write whose `COMMIT` reply was lost is looked up within the same budget
        /// (``resolvesCommitOutcomes``) and repeated only when it did not commit. When the budget is spent the
        /// call throws ``PostgresStoreError/Code/serverUnavailable`` (or
        /// ``PostgresStoreError/Code/commitOutcomeUnknown`` for a lost commit not yet resolved). `.zero` retries
        /// once at once (a pooled connection the server closed) and then gives up.
        public var failoverBudget: Duration = .seconds(10)
        /// Whether a write whose `COMMIT` reply was lost (the server died, a failover, a cut connection) is
        /// resolved rather than reported as ``PostgresStoreError/Code/commitOutcomeUnknown``: each write
        /// transaction writes a random identifier of its own to the schema's `_corevalue_commits` table and
        /// holds a transaction-scoped advisory lock named by it; when the reply is lost the store connects
        /// again (to whichever host is primary now), ends the old backend if it still holds the lock, and
        /// looks the identifier up: found, the save succeeded and the call returns its result; not found, it
        /// never committed and is run again, within ``failoverBudget``. Only when the budget runs out first
        /// (or the table was emptied by hand) does the call throw `commitOutcomeUnknown`. The table comes from
        /// `Migrator.migrate(model:)` (or a migration file from its diff) and is checked when the store opens.
        /// Costs one small insert per write transaction, in the same round trip; old identifiers are deleted
        /// after an hour (or ten failover budgets, if longer). See the Consistency article of `CoreValue` for what this
        /// promises with synchronous and asynchronous standbys.
        public var resolvesCommitOutcomes = true
        /// The longest a pooled connection is kept, from when it connected; an older one is closed when it
        /// comes back to the pool or before it is handed out, and the next checkout connects anew. libpq picks
        /// a host of a multi-host URL only when it connects, so this is what moves a store on
        /// `target_session_attrs=prefer-standby` back to a standby that returned, and spreads connections over
        /// hosts again after a failover. `nil`: connections are kept until they break.
        public var maxConnectionLifetime: Duration? = .seconds(300)
        /// Where a ``ChangeListener`` connects, when it must differ from ``connection``: `LISTEN` needs a
        /// session of its own, so when the pool goes through pgbouncer in transaction mode, give the direct
        /// URL of the primary here. `nil`: listeners use ``connection``.
        public var listenConnection: ConnectionConfiguration?
        /// When set, every committed save also sends one `NOTIFY` on this channel listing the rows it changed
        /// (see ``ChangeListener``).
        public var notificationChannel: String?
        /// Open a store that only fetches (for a hot standby): saves are refused up front with
        /// ``PostgresStoreError/Code/readOnlyStore``.
        public var readOnly = false
        /// The longest a statement may run; the server cancels it after that (57014, as ``PostgresStoreError/Code/serverError``).
        /// Sent as `SET LOCAL statement_timeout` in each transaction (never session state, so it works behind
        /// pgbouncer), which makes a one-statement fetch a transaction too. `nil`: the server's setting.
        public var statementTimeout: Duration?
        /// How many statements each pooled connection keeps prepared (by SQL text, least recently used
        /// dropped first): the server parses and plans the store's statements once per connection instead of
        /// on every call. A statement is prepared the first time a connection runs it, in the same round trip
        /// where it goes in a pipeline, one more round trip otherwise. Set 0 for a transaction-mode pooler
        /// (pgbouncer before 1.21, or one without `max_prepared_statements`), which does not keep a session's
        /// prepared statements from one transaction to the next; a connection whose server forgets a
        /// statement it prepared turns its cache off by itself. A statement whose plan a migration made
        /// stale is prepared again and its transaction run again, never surfaced.
        public var preparedStatementCacheSize = 256
        /// Whether every committed save is recorded in the schema's history tables, for
        /// ``PostgresStore/history(after:limit:)`` and history listeners (see `HistoryStore`). The tables come
        /// from `Migrator.migrate(model:recordsHistory:)` (or a migration file from its diff) and are checked
        /// when the store opens. Off by default: a save then costs nothing more.
        public var recordsHistory = false
        /// The author history records for saves whose context names none (`transactionAuthor`).
        public var historyAuthor: String?
        /// Whether opening the store compares the database's tables with the model.
        public var verifySchema = true
        /// Whether a fetch whose values are all integers, Booleans or UUIDs (a fetch by identifiers, the
        /// batched `toObjects`, a relationship's rows) reads its rows through `COPY (SELECT ...) TO STDOUT
        /// (FORMAT binary)`, with those values written in the statement as literals: libpq's work per row is
        /// about a third of a `SELECT`'s. Any other fetch is a parameterized `SELECT`. Turn it off for a
        /// proxy that does not pass COPY through (pgbouncer does).
        public var readsThroughCopy = true
        /// Whether a bulk load of new unique structs (a streamed `saveAll` whose identifiers no stored row can
        /// share) writes its rows with `COPY ... FROM STDIN (FORMAT binary)`, with their keys reserved from the
        /// table's sequence in one statement first: about a third of the server's time of `INSERT`s. Only
        /// with ``verifySchema`` (binary COPY takes the model's column types as they are) and for an entity
        /// without foreign-key columns. Turn it off for a proxy that does not pass COPY through (pgbouncer
        /// does).
        public var writesThroughCopy = true
        /// Receives a ``StoreEvent`` for each statement, retry and pool event, on the thread that did the
        /// work; keep it fast. `nil` (the default): nothing is measured.
        public var onEvent: (@Sendable (StoreEvent) -> Void)?

        /// A configuration for a parsed connection.
        public init(connection: ConnectionConfiguration, schema: String? = nil) {
            self.connection = connection
            self.schema = schema
        }

        /// A configuration for a URL or `key=value` connection string.
        ///
        /// - Throws: The driver's error for a malformed connection string.
        public init(url: String, schema: String? = nil) throws {
            self.init(connection: try ConnectionConfiguration(url), schema: schema)
        }

        /// This configuration changed by `change`: for an expression, as in the package's own tools and
        /// tests (`PostgresStore(model: m, configuration: try .init(url: u).with { $0.poolSize = 1 })`).
        package func with(_ change: (inout Configuration) -> Void) -> Configuration {
            var changed = self
            change(&changed)
            return changed
        }

        /// The checks the store's initialiser makes before connecting.
        func validate() throws {
            if let notificationChannel { try ChangeListener.validate(channel: notificationChannel) }
            guard maxAttempts >= 1 else {
                throw PostgresStoreError(.invalidConfiguration, "maxAttempts must be at least 1, got \(maxAttempts)")
            }
            guard failoverBudget >= .zero else {
                throw PostgresStoreError(
                    .invalidConfiguration, "the failover budget must not be negative, got \(failoverBudget)")
            }
            if let maxConnectionLifetime, maxConnectionLifetime <= .zero {
                throw PostgresStoreError(
                    .invalidConfiguration,
                    "the maximum connection lifetime must be positive, got \(maxConnectionLifetime)")
            }
            guard preparedStatementCacheSize >= 0 else {
                throw PostgresStoreError(
                    .invalidConfiguration,
                    "the prepared statement cache size must not be negative, got \(preparedStatementCacheSize)")
            }
            if let statementTimeout, statementTimeout <= .zero {
                throw PostgresStoreError(
                    .invalidConfiguration, "the statement timeout must be positive, got \(statementTimeout)")
            }
        }

        /// `statement_timeout` in whole milliseconds (at least 1), for `SET LOCAL`.
        var statementTimeoutMilliseconds: Int64? {
            guard let statementTimeout else { return nil }
            let (seconds, attoseconds) = statementTimeout.components
            return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
    }
}
