@_spi(StoreImplementation) import CoreValue
import Foundation

/// A store whose next `apply` calls fail (before reaching the wrapped store): for testing what a failed save
/// leaves behind.
final class FailingStore: StoreRefinements, @unchecked Sendable {
    let base: any Store
    private let lock = NSLockish()
    private var failures: Int

    /// Wraps `base`; the first `failures` calls to `apply` throw a conflict.
    init(_ base: any Store, failures: Int = 1) {
        self.base = base
        self.failures = failures
    }

    var model: ManagedObjectModel { base.model }

    /// Makes the next `count` calls to `apply` fail.
    func failNext(_ count: Int = 1) { lock.with { failures = count } }

    func fetch(_ request: FetchRequest) throws -> [RowSnapshot] { try base.fetch(request) }

    func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] { try base.fetch(ids: ids) }

    func fetch(entityName: String, key: String, values: [AttributeValue]) throws -> [RowSnapshot] {
        try base.refinements.fetch(entityName: entityName, key: key, values: values)
    }

    func apply(_ changes: ChangeSet) throws -> SaveResult {
        let fail = lock.with {
            guard failures > 0 else { return false }
            failures -= 1
            return true
        }
        if fail { throw CVManagedStructError.conflict(entity: "FailingStore", message: "injected failure") }
        return try base.apply(changes)
    }
}
