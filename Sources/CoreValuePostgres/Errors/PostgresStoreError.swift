@_spi(StoreImplementation) import CoreValue

/// An error of the PostgreSQL store that is not a server error: a value that cannot be sent, a database
/// that does not match the model, a migration problem, a pool or configuration problem.
///
/// Switch over ``code``; new codes may be added without breaking existing code.
public struct PostgresStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of error this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidValue, schemaMismatch, migrationChanged, invalidMigration, invalidConfiguration
            case poolClosed, poolTimeout, unexpectedResult, invalidModel, migrationOutOfOrder, readOnlyStore
            case migrationNeedsReview, serverUnavailable, changesMayHaveBeenMissed
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// A value cannot be stored, e.g. text containing a NUL character (PostgreSQL text cannot hold one).
        public static let invalidValue = Code(.invalidValue)
        /// The database's tables do not match the model; ``PostgresStoreError/mismatches`` lists every one.
        public static let schemaMismatch = Code(.schemaMismatch)
        /// An already-applied migration file was edited (its checksum changed).
        public static let migrationChanged = Code(.migrationChanged)
        /// A migration file or directory is unusable (bad name, duplicate version, unreadable).
        public static let invalidMigration = Code(.invalidMigration)
        /// A store or pool setting is invalid.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The connection pool was closed.
        public static let poolClosed = Code(.poolClosed)
        /// No pooled connection became free within the store's checkout timeout.
        public static let poolTimeout = Code(.poolTimeout)
        /// The model cannot be mapped to PostgreSQL, e.g. a table, column or join-table name longer than 63
        /// bytes (PostgreSQL would silently truncate it) or two tables with the same name.
        public static let invalidModel = Code(.invalidModel)
        /// A pending migration file has a version older than one already applied.
        public static let migrationOutOfOrder = Code(.migrationOutOfOrder)
        /// The server returned something the store did not expect.
        public static let unexpectedResult = Code(.unexpectedResult)
        /// A save was given to a store opened with `readOnly: true` (for example on a standby).
        public static let readOnlyStore = Code(.readOnlyStore)
        /// ``Migrator/migrate(model:)-51bl7`` found steps that would lose data or may fail (dropping a column, a
        /// narrowing type change, ...): nothing was applied; ``PostgresStoreError/mismatches`` lists them.
        public static let migrationNeedsReview = Code(.migrationNeedsReview)

        /// No usable server answered within ``PostgresStore/Configuration/failoverBudget`` (refused
        /// connections, connections lost before `COMMIT` was sent, a server shutting down or starting up):
        /// nothing was committed, so the same work can be tried again later. A connection lost while `COMMIT`
        /// was in flight is `LibPQError(.commitOutcomeUnknown)` instead, since that transaction may have
        /// committed.
        public static let serverUnavailable = Code(.serverUnavailable)
        /// A ``ChangeListener`` lost its connection and listens again on a new one; changes committed in
        /// between were not heard, so reload what you cache.
        public static let changesMayHaveBeenMissed = Code(.changesMayHaveBeenMissed)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// What kind of error this is.
    public var code: Code
    /// What was wrong, naming the entity, key, file or setting.
    public var message: String
    /// For ``Code/schemaMismatch``: every difference between the database and the model.
    public var mismatches: [String]

    /// Creates an error.
    public init(_ code: Code, _ message: String, mismatches: [String] = []) {
        self.code = code
        self.message = message
        self.mismatches = mismatches
    }

    /// `<code>: message`, followed by the mismatches one per line.
    public var description: String {
        var text = "\(code): \(message)"
        for mismatch in mismatches { text += "\n  - " + mismatch }
        return text
    }
}
