import Foundation

/// `localizedDescription` is the error's `description` (code and message, never a bound value), not
/// Foundation's generic "The operation could not be completed".
extension PostgresStoreError: LocalizedError {
    /// The error's ``description``.
    public var errorDescription: String? { description }
}
