import Foundation

/// A table the whole process shares, every read and write under one lock: what the library's few process-wide
/// caches are (struct types' field names, interned attribute layouts, entities' slots), instead of a
/// `nonisolated(unsafe)` static in each file with a lock beside it that the compiler cannot tie to it.
///
/// Entries are never removed: each cache holds one entry per type or name a program declares, so it stays
/// bounded by the program (the callers say why for theirs).
package final class LockedTable<Key: Hashable, Value>: @unchecked Sendable {
    // @unchecked: `entries` is read and written only under `lock`, in the methods below. Keys and values are
    // handed to every thread as they are, so keep only values that never change once made (field names, layouts,
    // slot numbers, boxing plans): the table's `Value` need not be `Sendable` (key paths are not), so the
    // compiler cannot check that.
    private let lock = NSLock()
    private var entries: [Key: Value] = [:]

    package init() {}

    /// The value kept under `key`, if any.
    package subscript(key: Key) -> Value? {
        lock.withLock { entries[key] }
    }

    /// The value kept under `key`, or `make(count)` kept there first (`count`: how many entries the table held
    /// before). `make` runs under the lock: keep it short and never let it reach this table again.
    package func value(for key: Key, orMake make: (_ count: Int) -> Value) -> Value {
        lock.withLock {
            if let value = entries[key] { return value }
            let value = make(entries.count)
            entries[key] = value
            return value
        }
    }

    /// Keeps `value` under `key` unless a value is kept there already; returns the one kept. For a value made
    /// outside the lock (it may take long): of two threads that made one at once, both get the first kept.
    package func keep(_ value: Value, for key: Key) -> Value {
        lock.withLock {
            if let kept = entries[key] { return kept }
            entries[key] = value
            return value
        }
    }
}
