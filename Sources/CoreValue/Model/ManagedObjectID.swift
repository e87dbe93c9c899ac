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
///
/// The ID a persistent struct is unboxed with (or given back by its save) also carries the ``version`` of the
/// row it was read at, so that saving the struct through any context, a fresh one per request or after the
/// struct was encoded and decoded again, checks the row against that version (see the Consistency article).
/// Identity is the entity and the key: `==` and hashing leave the version out.
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
    /// The version of the row when this ID was read into a struct; `nil` for an ID not read from a row (an
    /// object's own ``ManagedObject/objectID``, a temporary ID, one made with ``permanent(_:_:)``), and for a
    /// row saved more than 4,294,967,294 times. A context that does not hold the object already checks a save
    /// of the struct against it, as it checks its own objects against the version it read them at.
    public var version: Int64? { storedVersion == 0 ? nil : Int64(storedVersion) - 1 }
    /// ``version`` plus one, 0 for none: 32 bits fit in the bytes the key's case leaves free, so an ID is no
    /// larger than it was without a version (every object, registry entry and error holds one, and the frames
    /// of the few recursive walks, which must fit a 512 KiB stack in a debug build, hold several).
    private var storedVersion: UInt32 = 0

    /// Creates an ID.
    public init(entityName: String, key: Key) {
        self.entityName = entityName
        self.key = key
    }

    /// This ID carrying the version its row was read at (``version``); without one when `version` is `nil`,
    /// negative or beyond what an ID carries.
    package func read(at version: Int64?) -> ManagedObjectID {
        var id = self
        if let version, version >= 0, version < Int64(UInt32.max) {
            id.storedVersion = UInt32(version) + 1
        } else {
            id.storedVersion = 0
        }
        return id
    }

    private enum CodingKeys: String, CodingKey {
        case entityName, key, version
    }

    /// Decodes an ID, with the version it was read at when it carries one (IDs encoded before they did,
    /// decode without).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            entityName: try container.decode(String.self, forKey: .entityName),
            key: try container.decode(Key.self, forKey: .key))
        self = read(at: try container.decodeIfPresent(Int64.self, forKey: .version))
    }

    /// Encodes the entity, the key and, when it carries one, the version read.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entityName, forKey: .entityName)
        try container.encode(key, forKey: .key)
        try container.encodeIfPresent(version, forKey: .version)
    }

    /// Whether both IDs name the same object: the same entity and key, whatever version each carries.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.key == rhs.key && lhs.entityName == rhs.entityName
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
