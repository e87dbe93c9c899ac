extension Dictionary {
    /// Makes room for at least `count` entries, at least doubling the capacity when it grows: a table filled
    /// in parts (a streamed save's results, part by part) is rehashed a logarithmic number of times, where
    /// `reserveCapacity` with each part's exact total rehashed every entry once per part.
    package mutating func reserveGrowing(_ count: Int) {
        guard capacity < count else { return }
        reserveCapacity(Swift.max(count, capacity.doubledClamped))
    }
}

extension Set {
    /// Makes room for at least `count` members, at least doubling the capacity when it grows (see
    /// `Dictionary.reserveGrowing(_:)`).
    package mutating func reserveGrowing(_ count: Int) {
        guard capacity < count else { return }
        reserveCapacity(Swift.max(count, capacity.doubledClamped))
    }
}

extension Array {
    /// Makes room for at least `count` elements, at least doubling the capacity when it grows (see
    /// `Dictionary.reserveGrowing(_:)`): `reserveCapacity` allocates exactly what it is asked for, so asking
    /// for a little more each time copied the whole array each time.
    package mutating func reserveGrowing(_ count: Int) {
        guard capacity < count else { return }
        reserveCapacity(Swift.max(count, capacity.doubledClamped))
    }
}

extension Int {
    /// The sum of non-negative counts, or `Int.max` where it would overflow: windows and capacities are
    /// computed from numbers a request carries (`fetchLimit: .max`), which must never trap.
    package static func clampedSum(_ values: Int...) -> Int {
        var sum = 0
        for value in values {
            let (next, overflow) = sum.addingReportingOverflow(value)
            if overflow { return value < 0 ? .min : .max }
            sum = next
        }
        return sum
    }

    /// Twice this capacity, or `Int.max`.
    fileprivate var doubledClamped: Int {
        let (doubled, overflow) = multipliedReportingOverflow(by: 2)
        return overflow ? .max : doubled
    }
}
