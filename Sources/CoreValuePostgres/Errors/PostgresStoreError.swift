@_spi(StoreImplementation) import CoreValue
import LibPQ

/// An error of the PostgreSQL store: a value that cannot be sent, a database that does not match the model, a
/// migration, pool or configuration problem, and, for every call a context makes (fetches, counts, streams,
/// saves), the server's and the driver's errors too, with the original as ``underlying``. A save throws this
/// or `CVManagedStructError`, nothing else (and `CancellationError` for a cancelled async call).
///
/// Switch over ``code``; new codes may be added without breaking existing code.
public struct PostgresStoreError: Error, Sendable, Hashable, CustomStringConvertible, WrappingDatabaseError {
    /// What kind of error this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case invalidValue, schemaMismatch, migrationChanged, invalidMigration, invalidConfiguration
            case poolClosed, poolTimeout, unexpectedResult, invalidModel, migrationOutOfOrder, readOnlyStore
            case migrationNeedsReview, serverUnavailable, changesMayHaveBeenMissed
            case serverError, driverError, commitOutcomeUnknown, loginRefused, permissionDenied, sandboxed
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
        /// `Migrator.migrate(model:recordsHistory:)` found steps that would lose data or may fail (dropping a column, a
        /// narrowing type change, ...): nothing was applied; ``PostgresStoreError/mismatches`` lists them.
        public static let migrationNeedsReview = Code(.migrationNeedsReview)

        /// No usable server answered within ``PostgresStore/Configuration/failoverBudget`` (refused
        /// connections, connections lost before `COMMIT` was sent, a server shutting down or starting up):
        /// nothing was committed, so the same work can be tried again later. A connection lost while `COMMIT`
        /// was in flight is ``commitOutcomeUnknown`` instead, since that transaction may have committed.
        public static let serverUnavailable = Code(.serverUnavailable)
        /// The server refused a statement (a constraint, a permission, a cancelled or timed-out statement, a
        /// serialization failure after the store's last attempt): ``PostgresStoreError/underlying`` is its
        /// `DatabaseError`, and ``PostgresStoreError/sqlState`` its code. Nothing of the transaction was
        /// committed.
        public static let serverError = Code(.serverError)
        /// The driver failed outside a `COMMIT`: a connection refused, closed or lost, a value it could not
        /// encode or decode, a protocol violation. ``PostgresStoreError/underlying`` is its `LibPQError`.
        /// Nothing was committed.
        public static let driverError = Code(.driverError)
        /// The connection was lost after `COMMIT` was sent and before its reply came, and the store could not
        /// find out whether the transaction committed: ``PostgresStore/Configuration/resolvesCommitOutcomes``
        /// is off, the lookup did not finish within ``PostgresStore/Configuration/failoverBudget``, or the
        /// commit table was emptied by hand. The store does not repeat it; read the rows to find out.
        /// ``PostgresStoreError/underlying`` is the driver's `LibPQError` or the lookup's last error.
        public static let commitOutcomeUnknown = Code(.commitOutcomeUnknown)
        /// The server refused the login: an untrusted certificate, a certificate for another host, TLS required
        /// or unavailable, a wrong password, no channel binding, no `pg_hba.conf` rule.
        /// ``PostgresStoreError/loginRefusal`` says which; ``PostgresStoreError/underlying`` is the driver's
        /// `LibPQError`. The message never holds the password.
        public static let loginRefused = Code(.loginRefused)
        /// The role lacks a privilege (the server's 42501): the message names the right (`INSERT`, `UPDATE`,
        /// `DELETE`, `SELECT`, `USAGE`, `CREATE`) and the object; ``PostgresStoreError/underlying`` is the
        /// server's `DatabaseError`. Nothing was committed. The Security article lists the rights each part
        /// needs.
        public static let permissionDenied = Code(.permissionDenied)
        /// A ``ChangeListener`` lost its connection and listens again on a new one; changes committed in
        /// between were not heard, so reload what you cache.
        public static let changesMayHaveBeenMissed = Code(.changesMayHaveBeenMissed)
        /// The store works inside a test's transaction sandbox (`TestSchema.withTransaction` in
        /// `CoreValueTesting`): one connection, in one transaction rolled back at the end. What needs a commit
        /// (a ``ChangeListener``, a ``HistoryListener``, reading history) cannot work there, nor a call made
        /// while another call of the same thread holds the connection; a sandbox whose connection broke is
        /// over (what the test saved is gone). The message says which.
        public static let sandboxed = Code(.sandboxed)

        /// The code's name.
        public var description: String { value.rawValue }
    }

    /// What kind of error this is.
    public var code: Code
    /// What was wrong, naming the entity, key, file or setting.
    public var message: String
    /// For ``Code/schemaMismatch``: every difference between the database and the model.
    public var mismatches: [String]
    /// The server's or the driver's error behind this one (a `DatabaseError` or a `LibPQError`), for
    /// ``Code/serverError``, ``Code/driverError``, ``Code/commitOutcomeUnknown`` and
    /// ``Code/serverUnavailable``.
    public var underlying: (any Error)?

    /// The server's error behind this one, if any.
    public var databaseError: DatabaseError? { underlying as? DatabaseError }
    /// For ``Code/loginRefused``: why the server refused the login.
    public var loginRefusal: LoginRefusal? {
        guard let error = underlying as? LibPQError, error.code == .connectionFailed else { return nil }
        return LoginRefusal(message: error.refusalText)
    }
    /// The SQLSTATE of the server's error behind this one (`.uniqueViolation`, `.queryCanceled`, ...), if any.
    public var sqlState: SQLState? { databaseError?.sqlState }

    /// Creates an error.
    public init(_ code: Code, _ message: String, mismatches: [String] = [], underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.mismatches = mismatches
        self.underlying = underlying
    }

    /// The same code, message and mismatches, and underlying errors that describe themselves alike.
    public static func == (lhs: PostgresStoreError, rhs: PostgresStoreError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.mismatches == rhs.mismatches
            && lhs.underlying.map { "\($0)" } == rhs.underlying.map { "\($0)" }
    }

    /// Hashes the code, message and mismatches.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(mismatches)
    }

    /// `<code>: message`, followed by the mismatches one per line.
    public var description: String {
        var text = "\(code): \(message)"
        for mismatch in mismatches { text += "\n  - " + mismatch }
        return text
    }
}

extension PostgresStoreError {
    /// What the store throws for an error of the server or the driver that ends one of a context's calls
    /// (after any retries): wrapped, with the original as ``underlying``. Every other error is returned as
    /// it is.
    static func wrapping(_ error: any Error) -> any Error {
        switch error {
        case let error as DatabaseError where error.sqlState == .insufficientPrivilege:
            return permissionDenied(error)
        case let error as DatabaseError:
            return PostgresStoreError(.serverError, error.description, underlying: error)
        case let error as PipelineError where error.error.sqlState == .insufficientPrivilege:
            return permissionDenied(error.error)
        case let error as PipelineError:
            return PostgresStoreError(.serverError, error.error.description, underlying: error.error)
        case let error as LibPQError
        where error.code == .connectionFailed && LoginRefusal(message: error.refusalText) != nil:
            return PostgresStoreError(.loginRefused, error.message, underlying: error)
        case let error as LibPQError where error.code == .commitOutcomeUnknown:
            return PostgresStoreError(.commitOutcomeUnknown, error.message, underlying: error)
        case let error as LibPQError:
            return PostgresStoreError(.driverError, error.description, underlying: error)
        case let error as CommitNotMade:
            // Not retried (a stream that handed out a batch): nothing was committed.
            return PostgresStoreError(.serverUnavailable, error.description, underlying: error.lost)
        default:
            return error
        }
    }
}

extension PostgresStoreError {
    /// A 42501 as ``Code/permissionDenied``, naming the right the statement needed and the object: the server
    /// names only the object ("permission denied for table Employee"); the right is the statement's (`USAGE`
    /// for a schema or a sequence).
    static func permissionDenied(_ error: DatabaseError) -> PostgresStoreError {
        let object = error.message.range(of: "permission denied for ").map { String(error.message[$0.upperBound...]) }
        let right =
            object.map { $0.hasPrefix("schema") || $0.hasPrefix("sequence") } == true
            ? "USAGE" : neededRight(error.sql ?? "")
        return PostgresStoreError(
            .permissionDenied,
            "the role lacks \(right) on \(object ?? "an object the statement uses") (42501: \(error.message))",
            underlying: error)
    }

    /// The right a statement needs on its table, from its first command word (`COPY ... FROM` inserts; an
    /// upsert needs `UPDATE` as well).
    private static func neededRight(_ sql: String) -> String {
        let words = sql.uppercased().split { !$0.isLetter }
        for word in words {
            switch word {
            case "INSERT", "COPY": return sql.uppercased().contains("ON CONFLICT") ? "INSERT and UPDATE" : "INSERT"
            case "UPDATE", "DELETE", "SELECT", "CREATE", "ALTER", "DROP", "TRUNCATE": return String(word)
            default: continue
            }
        }
        return "a privilege"
    }
}
