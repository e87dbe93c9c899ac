/// The connection's transaction state as libpq reports it (`PQtransactionStatus`).
package enum TransactionStatus: Sendable {
    /// Not in a transaction.
    case idle
    /// A command is in progress.
    case active
    /// Inside a transaction block that has not failed.
    case inTransaction
    /// Inside a failed transaction block: only ROLLBACK is accepted.
    case inError
    /// The connection is bad or closed.
    case unknown
}
