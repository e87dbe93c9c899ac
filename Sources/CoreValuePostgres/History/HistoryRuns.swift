/// The run-length form in which a history row keeps its per-change numbers: a bulk save of 10,000 rows of
/// one entity, keys ascending, one version, records eight numbers instead of 40,000 (a quarter of the
/// save's time went into writing, compressing and logging those arrays).
///
/// Keys are `(first, count)` pairs of consecutive ascending keys; versions, entity and property positions
/// are `(value, count)` pairs of equal values. Random keys take twice the room of a plain array.
enum HistoryRuns {
    /// Consecutive ascending keys as `first, count` pairs.
    static func ranges(_ keys: [Int64]) -> [Int64] {
        var pairs: [Int64] = []
        var index = 0
        while index < keys.count {
            var end = index + 1
            while end < keys.count, keys[end - 1] < .max, keys[end] == keys[end - 1] + 1 { end += 1 }
            pairs += [keys[index], Int64(end - index)]
            index = end
        }
        return pairs
    }

    /// Equal values as `value, count` pairs (the count as the value's type).
    static func runs<T: Equatable>(_ values: [T], count: (Int) -> T) -> [T] {
        var pairs: [T] = []
        var index = 0
        while index < values.count {
            var end = index + 1
            while end < values.count, values[end] == values[index] { end += 1 }
            pairs += [values[index], count(end - index)]
            index = end
        }
        return pairs
    }

    /// The keys of `ranges`, `total` of them.
    ///
    /// - Throws: ``PostgresStoreError/Code/unexpectedResult`` for pairs that do not make `total` keys.
    static func keys(_ ranges: [Int64], total: Int) throws -> [Int64] {
        var keys: [Int64] = []
        keys.reserveCapacity(total)
        for pair in stride(from: 0, to: ranges.count - 1, by: 2) {
            let (first, count) = (ranges[pair], ranges[pair + 1])
            guard count > 0, count <= Int64(total - keys.count), first <= Int64.max - (count - 1) else {
                throw malformed("key ranges")
            }
            keys += (0..<count).map { first + $0 }
        }
        guard keys.count == total, ranges.count % 2 == 0 else { throw malformed("key ranges") }
        return keys
    }

    /// The values of `runs`, `total` of them; `count` reads a run's length.
    static func values<T>(_ runs: [T], total: Int, what: String, count: (T) -> Int?) throws -> [T] {
        var values: [T] = []
        values.reserveCapacity(total)
        for pair in stride(from: 0, to: runs.count - 1, by: 2) {
            guard let length = count(runs[pair + 1]), length > 0, length <= total - values.count else {
                throw malformed(what)
            }
            values += repeatElement(runs[pair], count: length)
        }
        guard values.count == total, runs.count % 2 == 0 else { throw malformed(what) }
        return values
    }

    private static func malformed(_ what: String) -> PostgresStoreError {
        PostgresStoreError(.unexpectedResult, "a history row's \(what) do not make one value per change")
    }
}
