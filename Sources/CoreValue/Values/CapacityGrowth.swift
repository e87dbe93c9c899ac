extension Dictionary {
    /// Makes room for at least `count` entries, at least doubling the capacity when it grows: a table filled
    /// in parts (a streamed save's results, part by part) is rehashed a logarithmic number of times, where
    /// `reserveCapacity` with each part's exact total rehashed every entry once per part.
    package mutating func reserveGrowing(_ count: Int) {
        guard capacity < count else { return }
        reserveCapacity(Swift.max(count, capacity * 2))
    }
}

extension Set {
    /// Makes room for at least `count` members, at least doubling the capacity when it grows (see
    /// `Dictionary.reserveGrowing(_:)`).
    package mutating func reserveGrowing(_ count: Int) {
        guard capacity < count else { return }
        reserveCapacity(Swift.max(count, capacity * 2))
    }
}

extension Array {
    /// Makes room for at least `count` elements, at least doubling the capacity when it grows (see
    /// `Dictionary.reserveGrowing(_:)`): `reserveCapacity` allocates exactly what it is asked for, so asking
    /// for a little more each time copied the whole array each time.
    package mutating func reserveGrowing(_ count: Int) {
        guard capacity < count else { return }
        reserveCapacity(Swift.max(count, capacity * 2))
    }
}
