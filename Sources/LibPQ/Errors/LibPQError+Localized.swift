import Foundation

/// `localizedDescription` is the error's `description`, not Foundation's generic "The operation could not be
/// completed".
extension LibPQError: LocalizedError {
    /// The error's `description`.
    public var errorDescription: String? { description }
}
