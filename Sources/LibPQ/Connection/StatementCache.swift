import CLibPQ

/// The named statements a connection prepared for its own calls (``Connection/statementCacheCapacity``),
/// keyed by SQL text and parameter types, the least recently used dropped first.
///
/// The server parses and plans a statement once per session instead of on every call. A statement dropped
/// from the cache still exists on the server until the connection next runs a statement while idle, when it
/// is deallocated (``Connection/deallocateRetired(_:)``): deallocating inside a transaction could fail and
/// abort it.
struct StatementCache {
    /// A statement as the server parses it: its text and the parameter types fixed when it was prepared
    /// (the same text bound with other types is another statement).
    struct Key: Hashable {
        let sql: String
        let types: [Oid]
    }

    /// How many statements are kept; 0: none, every statement is sent unnamed.
    /// Set through ``resize(to:)``.
    private(set) var capacity: Int
    private var entries: [Key: (name: String, used: UInt64)] = [:]
    /// Where the last few statements found are in ``entries`` (a request sends the same few kept texts again:
    /// found without hashing them). Emptied whenever ``entries`` gains or loses a statement, which moves its
    /// indices; changing an entry's `used` in place does not.
    private var recent = RecentlyFound<Key, Dictionary<Key, (name: String, used: UInt64)>.Index>()
    private var clock: UInt64 = 0
    private var serial = 0
    /// Random per cache, so that names never repeat between connections: behind a transaction-mode pooler,
    /// a server connection may hold another client's statement under a name this one made.
    private let prefix = "_libpq_cached_\(String(UInt64.random(in: 0...UInt64.max), radix: 36))_"
    /// Names dropped from the cache whose statements may still exist on the server.
    private(set) var retired: [String] = []

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var count: Int { entries.count }

    /// The name the statement was prepared under, marking it used; `nil` when it is not prepared.
    mutating func name(of key: Key) -> String? {
        let index: Dictionary<Key, (name: String, used: UInt64)>.Index
        if let known = recent.value(for: key) {
            index = known
        } else {
            // One lookup: the key is a whole statement's text, hashed byte by byte.
            guard let found = entries.index(forKey: key) else { return nil }
            index = found
            recent.found(key, found)
        }
        clock += 1
        entries.values[index].used = clock
        return entries.values[index].name
    }

    /// A fresh name for a statement about to be prepared, recorded as prepared; the least recently used
    /// statement is retired first when the cache is full.
    mutating func add(_ key: Key) -> String {
        // `remove` empties `recent` before the table gains the key.
        remove(key)
        retireLeastRecentlyUsed(keeping: capacity - 1)
        serial += 1
        clock += 1
        // A prefix of ours, so that a caller's own `prepare(_:_:types:)` names never collide with these.
        let name = prefix + String(serial)
        entries[key] = (name, clock)
        return name
    }

    /// Drops a statement whose server statement is unusable (or may not exist); it is deallocated later.
    mutating func remove(_ key: Key) {
        recent.removeAll()
        if let entry = entries.removeValue(forKey: key) { retired.append(entry.name) }
    }

    /// Forgets a statement that was never prepared (its preparation failed or was skipped).
    mutating func discard(_ key: Key) {
        recent.removeAll()
        entries[key] = nil
    }

    /// Forgets every statement: the session that held them ended (``Connection/reset()``), or the server no
    /// longer knows them.
    mutating func removeAll() {
        recent.removeAll()
        entries = [:]
        retired = []
    }

    /// Hands the retired names over for deallocation.
    mutating func takeRetired() -> [String] {
        defer { retired = [] }
        return retired
    }

    /// Keeps at most `capacity` statements, retiring the least recently used beyond it.
    mutating func resize(to capacity: Int) {
        self.capacity = max(0, capacity)
        retireLeastRecentlyUsed(keeping: self.capacity)
    }

    /// Retires the least recently used statements until at most `count` are kept (a scan per statement:
    /// only when the cache is full, against the round trip a preparation costs).
    private mutating func retireLeastRecentlyUsed(keeping count: Int) {
        while entries.count > max(0, count), let oldest = entries.min(by: { $0.value.used < $1.value.used }) {
            recent.removeAll()
            entries[oldest.key] = nil
            retired.append(oldest.value.name)
        }
    }
}
