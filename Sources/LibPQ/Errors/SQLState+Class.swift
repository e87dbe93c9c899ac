extension SQLState {
    /// The class of an SQLSTATE: its first two characters, which group related conditions.
    ///
    /// Match a whole class in a `switch` or a `catch`:
    /// ```swift
    /// do { try store.apply(changes) }
    /// catch SQLState.Class.integrityConstraintViolation { ... }  // any 23xxx from the server
    /// ```
    public struct Class: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The two characters, e.g. `"23"`.
        public var rawValue: String

        /// Wraps a class code; any string is accepted so that classes newer than this driver are kept.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The class code itself.
        public var description: String { rawValue }

        /// 08: connection exception.
        public static let connectionException = Class(rawValue: "08")
        /// 22: data exception (a value out of range, malformed text, ...).
        public static let dataException = Class(rawValue: "22")
        /// 23: integrity constraint violation (unique, foreign key, not null, check, exclusion).
        public static let integrityConstraintViolation = Class(rawValue: "23")
        /// 25: invalid transaction state (a read-only transaction, a failed one).
        public static let invalidTransactionState = Class(rawValue: "25")
        /// 40: transaction rollback (serialization failure, deadlock).
        public static let transactionRollback = Class(rawValue: "40")
        /// 42: syntax error or access rule violation (undefined table or column, permission denied).
        public static let syntaxErrorOrAccessRuleViolation = Class(rawValue: "42")
        /// 53: insufficient resources (disk full, out of memory, too many connections).
        public static let insufficientResources = Class(rawValue: "53")
        /// 55: object not in prerequisite state (a lock not available).
        public static let objectNotInPrerequisiteState = Class(rawValue: "55")
        /// 57: operator intervention (a canceled statement, a shutdown).
        public static let operatorIntervention = Class(rawValue: "57")

        /// Whether a code belongs to this class: `case SQLState.Class.transactionRollback = error.sqlState`.
        public static func ~= (pattern: Class, value: SQLState) -> Bool {
            value.codeClass == pattern
        }

        /// Whether an error is a server error of this class (or wraps one), for
        /// `catch SQLState.Class.dataException { ... }`.
        public static func ~= (pattern: Class, error: any Error) -> Bool {
            error.serverError.map { $0.sqlState.codeClass == pattern } ?? false
        }
    }

    /// The code's class (``errorClass`` as a typed value).
    public var codeClass: Class { Class(rawValue: errorClass) }

    /// Whether an error is a server error with this exact code (or wraps one), for
    /// `catch SQLState.uniqueViolation { ... }`.
    public static func ~= (pattern: SQLState, error: any Error) -> Bool {
        error.serverError?.sqlState == pattern
    }
}

/// An error of a layer above the driver that carries the server's error (the store's `PostgresStoreError`):
/// `catch SQLState.uniqueViolation` matches it too.
package protocol WrappingDatabaseError: Error {
    /// The server's error behind this one, if any.
    var databaseError: DatabaseError? { get }
}

extension Error {
    /// The server's error this is or wraps.
    fileprivate var serverError: DatabaseError? {
        (self as? DatabaseError) ?? (self as? any WrappingDatabaseError)?.databaseError
    }
}
