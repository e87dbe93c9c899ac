@testable import CoreValuePostgres
import Testing

/// The run-length form of a history row's per-change numbers: round trips, and rows that do not add up.
@Suite struct HistoryRunsTests {
    @Test func keysAndValuesRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let shapes: [[Int64]] = [
            [], [7], Array(1...10_000), [5, 6, 7, 1, 2, 9, .max - 1, .max, .min, .min + 1],
            (0..<500).map { _ in Int64.random(in: -50...50, using: &generator) },
        ]
        for keys in shapes {
            #expect(try HistoryRuns.keys(HistoryRuns.ranges(keys), total: keys.count) == keys)
            let versions: [Int64?] = keys.map { $0 % 3 == 0 ? nil : $0 % 2 }
            let runs = HistoryRuns.runs(versions) { Int64($0) }
            #expect(
                try HistoryRuns.values(runs, total: versions.count, what: "versions") { $0.map(Int.init) } == versions)
        }
        #expect(HistoryRuns.ranges(Array(1...10_000)) == [1, 10_000])
        #expect(HistoryRuns.runs([Int32](repeating: 3, count: 10_000)) { Int32($0) } == [3, 10_000])
    }

    @Test func rowsThatDoNotAddUpAreRefused() {
        let bad: [[Int64]] = [[1, 0], [1, -1], [1, 3], [1], [.max, 2], [1, 1, 2]]
        for ranges in bad {
            #expect(throws: PostgresStoreError.self) { _ = try HistoryRuns.keys(ranges, total: 2) }
        }
        for runs in [[Int32(0), 0], [0, 3], [0], [0, -1], [0, 1, 0, 2]] {
            #expect(throws: PostgresStoreError.self) {
                _ = try HistoryRuns.values(runs, total: 2, what: "entities") { Int($0) }
            }
        }
    }
}
