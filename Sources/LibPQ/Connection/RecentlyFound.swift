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
///
/// Inlinable, so that `CoreValuePostgres` (the statement templates) gets it specialized for its keys: used
/// from there as a generic of another module, each lookup went through the keys' witnesses and type metadata,
/// about 650 instructions. Public behind an SPI rather than `package`: this toolchain does not specialize an
/// `@inlinable package` generic in another module (tried), while it does a public one.
@_spi(Driver) public struct RecentlyFound<Key: Equatable, Value> {
    /// How many keys are kept.
    @inlinable public static var capacity: Int { 8 }

    @usableFromInline var entries: [(key: Key, value: Value)] = []

    /// An empty list.
    @inlinable public init() {}

    /// What was found for `key`, if it is among the last few found.
    @inlinable public func value(for key: Key) -> Value? {
        for entry in entries where entry.key == key { return entry.value }
        return nil
    }

    /// Records what the table gave for `key`, dropping the least recent entry when full.
    @inlinable public mutating func found(_ key: Key, _ value: Value) {
        if entries.count == Self.capacity { entries.removeLast() }
        entries.insert((key, value), at: 0)
    }

    /// Forgets every entry.
    @inlinable public mutating func removeAll() {
        if !entries.isEmpty { entries.removeAll(keepingCapacity: true) }
    }
}

extension RecentlyFound: Sendable where Key: Sendable, Value: Sendable {}
