import Foundation

/// Temporary keys: unique within the process, cheap to make (a random process prefix and a counter, instead
/// of drawing a random UUID for every inserted object).
private enum TemporaryKeys {
    private final class Counter: @unchecked Sendable {
        // @unchecked: `next` is read and written under `lock`.
        let lock = NSLock()
        var next: UInt64 = 0
        let prefix = UUID().uuid
    }

    private static let counter = Counter()

    static func next() -> UUID {
        counter.lock.lock()
        let number = counter.next
        counter.next &+= 1
        counter.lock.unlock()
        // The prefix's first 8 bytes, then the counter's, big-endian.
        let p = counter.prefix
        func byte(_ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: number >> shift) }
        return UUID(
            uuid: (
                p.0, p.1, p.2, p.3, p.4, p.5, p.6, p.7, byte(56), byte(48), byte(40), byte(32), byte(24), byte(16),
                byte(8), byte(0)
            ))
    }
}

/// The identity of a managed object: its entity and its key in the store.
///
/// An object inserted into a context has a temporary ID until its context saves; then it gets a permanent
/// one, whose ``primaryKey`` is the row's surrogate key. Permanent IDs are stable across contexts and
/// processes, so they can be encoded, sent elsewhere and used to find the same row again.
public struct ManagedObjectID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The key part of an ID.
    public enum Key: Sendable, Hashable, Codable {
        /// Not yet saved: unique within the process.
        case temporary(UUID)
        /// Saved: the store's surrogate key.
        case permanent(Int64)
    }

    /// The entity of the object.
    public let entityName: String
    /// The key of the object.
    public let key: Key

    /// Creates an ID.
    public init(entityName: String, key: Key) {
        self.entityName = entityName
        self.key = key
    }

    /// A permanent ID for a stored row.
    public static func permanent(_ entityName: String, _ primaryKey: Int64) -> ManagedObjectID {
        ManagedObjectID(entityName: entityName, key: .permanent(primaryKey))
    }

    /// A new temporary ID for an object not yet saved.
    public static func temporary(_ entityName: String) -> ManagedObjectID {
        ManagedObjectID(entityName: entityName, key: .temporary(TemporaryKeys.next()))
    }

    /// Hashes the key alone: IDs of one entity share their entity name, and equality still compares it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
    }

    /// Whether the object has not been saved yet.
    public var isTemporary: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The store's surrogate key, or `nil` for a temporary ID.
    public var primaryKey: Int64? {
        if case .permanent(let value) = key { return value }
        return nil
    }

    /// `Entity/42` for a permanent ID, `Entity/temp-UUID` for a temporary one.
    public var description: String {
        switch key {
        case .permanent(let value): return "\(entityName)/\(value)"
        case .temporary(let uuid): return "\(entityName)/temp-\(uuid.uuidString)"
        }
    }
}
