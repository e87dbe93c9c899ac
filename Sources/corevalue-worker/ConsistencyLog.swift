import Foundation

// The history the consistency workload records (ConsistencyWorker.swift) and scripts/consistency/check.py
// reads: one JSON object a line, an `invoke` line before an operation is started and an `ok`, `fail` or
// `info` line when it ended (`info`: its outcome is unknown). An operation whose process was killed has an
// `invoke` line only, and the checker counts it as unknown too. Lines go through `AppendLog` (one write, then
// fsync), so what the log says was invoked was invoked before anything could kill the process.

/// A register's stored state as one read saw it, or as one write wrote it: a number and the tag of the
/// operation that wrote it, in two columns. Written together, they are read together unless a row is torn.
struct RegisterState: Codable, Equatable {
    /// The number: a product's price, or a persistent employee's age (a counter).
    var n: Int
    /// The writer's tag in the first column (a product's name, an employee's department).
    var a: String
    /// The writer's tag in the second column (an employee's job; a product has one tag column only).
    var b: String
}

/// One line of the history.
struct OperationLine: Codable {
    /// `invoke`, `ok`, `fail` or `info`.
    var type: String
    var process: String
    /// The operation's number within its process.
    var op: Int
    /// CLOCK_MONOTONIC in nanoseconds: one clock for every process of the machine, so that the checker may
    /// compare the times of different processes (realtime order).
    var time: UInt64
    /// `append`, `read` (lists), `uwrite`, `uread` (unique registers), `incr`, `pread` (persistent registers).
    var kind: String
    /// The key an append, `uwrite` or `incr` writes; the keys a read reads.
    var keys: [String]
    /// The tag of what a write writes (an append's elements are `<tag>.1`, `<tag>.2`), logged when it is
    /// invoked: an increment killed before its completion line still names what a read may find.
    var tag: String?
    /// The elements an append appends, in order.
    var append: [String]?
    /// The lists read, by key (an append records the list it read before appending).
    var lists: [String: [String]]?
    /// The registers read, by key (an `incr` records the state it read before writing).
    var registers: [String: RegisterState]?
    /// What a `uwrite` or `incr` writes.
    var write: RegisterState?
    var error: String?
    /// How many times the store ran this operation's transactions again (a lost connection, a failover): a
    /// fault that met work in flight shows here.
    var retries: Int?
}

/// CLOCK_MONOTONIC now, in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The keys of a workload of `count` keys of each kind: companies `k<i>` (lists), products `u<i>` (unique
/// registers, product id i) and employees `r<i>` (persistent registers, by name).
struct ConsistencyKeys {
    let count: Int
    var lists: [String] { (0..<count).map { "k\($0)" } }
    var uniques: [String] { (0..<count).map { "u\($0)" } }
    var persistents: [String] { (0..<count).map { "r\($0)" } }

    /// The product id of unique register `key` (`u<i>`).
    static func productID(_ key: String) throws -> Int32 {
        guard key.hasPrefix("u"), let id = Int32(key.dropFirst()) else {
            throw WorkerFailure("not a product key: \(key)")
        }
        return id
    }
}
