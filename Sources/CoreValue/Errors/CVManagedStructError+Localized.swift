import Foundation

/// `localizedDescription` is the error's `description` (what failed, on which entity and key, and why), not
/// Foundation's generic "The operation could not be completed": server code logs `localizedDescription`.
extension CVManagedStructError: LocalizedError {
    /// The error's ``description``.
    public var errorDescription: String? { description }
}
