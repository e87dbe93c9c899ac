/// The last few keys a table lookup found, with what it found, most recent first: looked at before the table.
///
/// A request path looks the same few statements up again and again, by keys holding a kept statement's text
/// (the same `String` each time). Hashing such a key reads every byte of the text (a few hundred), while
/// comparing it with the same `String` is one word compare (`String`'s `==` stops at identical storage), and a
/// different text of another length at its length. So a short scan here replaces most hashes; a miss costs the
/// scan and then the table's own lookup.
///
/// The owner empties it whenever the table changes in a way that could make an entry wrong (what it holds may
/// be a table index, which a change moves).
package struct RecentlyFound<Key: Equatable, Value> {
    /// How many keys are kept.
    package static var capacity: Int { 8 }

    private var entries: [(key: Key, value: Value)] = []

    package init() {}

    /// What was found for `key`, if it is among the last few found.
    package func value(for key: Key) -> Value? {
        for entry in entries where entry.key == key { return entry.value }
        return nil
    }

    /// Records what the table gave for `key`, dropping the least recent entry when full.
    package mutating func found(_ key: Key, _ value: Value) {
        if entries.count == Self.capacity { entries.removeLast() }
        entries.insert((key, value), at: 0)
    }

    /// Forgets every entry.
    package mutating func removeAll() {
        if !entries.isEmpty { entries.removeAll(keepingCapacity: true) }
    }
}

extension RecentlyFound: Sendable where Key: Sendable, Value: Sendable {}
