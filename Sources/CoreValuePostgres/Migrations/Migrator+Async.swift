@_spi(StoreImplementation) import CoreValue
import Foundation

extension Migrator {
    /// Applies the pending migrations, like ``migrate(_:)``, on a thread of its own (the migrator's
    /// connection blocks; no thread of the cooperative pool waits on it).
    ///
    /// - Throws: As ``migrate(_:)``.
    public func migrate(_ migrations: [Migration]) async throws -> [Migration] {
        try await Self.onOwnThread { try self.migrate(migrations) }
    }

    /// The DDL that brings the database to `model`, like ``diff(model:recordsHistory:)``.
    ///
    /// - Throws: As ``diff(model:recordsHistory:)``.
    public func diff(model: ManagedObjectModel, recordsHistory: Bool = false) async throws -> SchemaDiff {
        try await Self.onOwnThread { try self.diff(model: model, recordsHistory: recordsHistory) }
    }

    /// Applies the non-destructive part of the diff to `model`, like ``migrate(model:recordsHistory:)``.
    ///
    /// - Throws: As ``migrate(model:recordsHistory:)``.
    @discardableResult
    public func migrate(model: ManagedObjectModel, recordsHistory: Bool = false) async throws -> SchemaDiff {
        try await Self.onOwnThread { try self.migrate(model: model, recordsHistory: recordsHistory) }
    }

    /// Every migration with whether it was applied, like ``status(_:)``.
    ///
    /// - Throws: As ``status(_:)``.
    public func status(_ migrations: [Migration]) async throws -> [MigrationStatus] {
        try await Self.onOwnThread { try self.status(migrations) }
    }

    /// Runs `work` on a new thread and waits for it without blocking the caller's thread. Migrations are
    /// rare and short-lived: a thread per call costs nothing that matters.
    private static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
            thread.name = "CoreValuePostgres migrator"
            thread.start()
        }
    }
}
