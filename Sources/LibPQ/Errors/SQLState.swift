/// A five-character SQLSTATE error code reported by the server.
///
/// Unknown codes are kept as they are; the named statics cover the codes callers commonly branch on.
/// ```swift
/// catch let error as DatabaseError where error.sqlState == .uniqueViolation { ... }
/// ```
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code, e.g. `"23505"`.
    public var rawValue: String

    /// Wraps a code; any string is accepted so that codes newer than this driver are kept.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The class of the code: its first two characters (e.g. `"23"`, integrity constraint violation).
    public var errorClass: String { String(rawValue.prefix(2)) }

    /// Whether the code says the connection is gone or unusable: class 08 and 57P01-57P03.
    public var isConnectionError: Bool {
        errorClass == "08" || self == .adminShutdown || self == .crashShutdown || self == .cannotConnectNow
    }

    /// Whether repeating the whole transaction may succeed: serialization failure or deadlock.
    public var isRetryableTransactionError: Bool { self == .serializationFailure || self == .deadlockDetected }

    /// The code itself.
    public var description: String { rawValue }

    /// 23505: a unique constraint was violated.
    public static let uniqueViolation = SQLState(rawValue: "23505")
    /// 23503: a foreign key constraint was violated.
    public static let foreignKeyViolation = SQLState(rawValue: "23503")
    /// 23502: a NOT NULL constraint was violated.
    public static let notNullViolation = SQLState(rawValue: "23502")
    /// 23514: a CHECK constraint was violated.
    public static let checkViolation = SQLState(rawValue: "23514")
    /// 23P01: an exclusion constraint was violated.
    public static let exclusionViolation = SQLState(rawValue: "23P01")
    /// 40001: the transaction could not be serialized; retry it.
    public static let serializationFailure = SQLState(rawValue: "40001")
    /// 40P01: the transaction was chosen as a deadlock victim; retry it.
    public static let deadlockDetected = SQLState(rawValue: "40P01")
    /// 42P01: the table does not exist.
    public static let undefinedTable = SQLState(rawValue: "42P01")
    /// 42703: the column does not exist.
    public static let undefinedColumn = SQLState(rawValue: "42703")
    /// 42P07: the table already exists.
    public static let duplicateTable = SQLState(rawValue: "42P07")
    /// 42710: the object already exists.
    public static let duplicateObject = SQLState(rawValue: "42710")
    /// 57014: the statement was canceled (by a cancel request or a statement timeout).
    public static let queryCanceled = SQLState(rawValue: "57014")
    /// 57P01: the server terminated the session (shutdown or `pg_terminate_backend`).
    public static let adminShutdown = SQLState(rawValue: "57P01")
    /// 57P02: the server crashed.
    public static let crashShutdown = SQLState(rawValue: "57P02")
    /// 57P03: the server is not accepting connections yet.
    public static let cannotConnectNow = SQLState(rawValue: "57P03")
    /// 08000: a connection exception.
    public static let connectionException = SQLState(rawValue: "08000")
    /// 08003: the connection does not exist.
    public static let connectionDoesNotExist = SQLState(rawValue: "08003")
    /// 08006: the connection failed.
    public static let connectionFailure = SQLState(rawValue: "08006")
    /// 22P02: a value's text could not be parsed.
    public static let invalidTextRepresentation = SQLState(rawValue: "22P02")
    /// 22003: a numeric value is out of its type's range (an integer sum beyond `bigint`, say).
    public static let numericValueOutOfRange = SQLState(rawValue: "22003")
    /// 22021: a character is not valid in the encoding.
    public static let characterNotInRepertoire = SQLState(rawValue: "22021")
    /// 55P03: a lock could not be obtained (`NOWAIT`, `lock_timeout`).
    public static let lockNotAvailable = SQLState(rawValue: "55P03")
    /// 42501: the role lacks a privilege the statement needs.
    public static let insufficientPrivilege = SQLState(rawValue: "42501")
    /// 25006: a write was attempted in a read-only transaction.
    public static let readOnlySQLTransaction = SQLState(rawValue: "25006")
    /// 25P02: the transaction already failed; commands are ignored until its end.
    public static let inFailedSQLTransaction = SQLState(rawValue: "25P02")
    /// 26000: the named prepared statement does not exist on this session.
    public static let invalidSQLStatementName = SQLState(rawValue: "26000")
    /// 0A000: a feature the server does not support (also "cached plan must not change result type").
    public static let featureNotSupported = SQLState(rawValue: "0A000")
}
