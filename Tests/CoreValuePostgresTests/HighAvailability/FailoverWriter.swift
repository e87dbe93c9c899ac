@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// Writes made by one thread, one save each, until told to stop: what a failover must not break. Shared by
/// the failover tests over plain and over TLS connections, so that both check the same promises.
final class FailoverWriter: @unchecked Sendable {
    // @unchecked: every field is read and written under `lock`.
    private let lock = NSLock()
    private var stopped = false
    private(set) var acknowledged: [String] = []
    private(set) var outcomeUnknown: [String] = []
    private(set) var failures: [String] = []
    /// The longest time between two acknowledged saves: the write gap a failover costs.
    private(set) var longestGap: Duration = .zero

    var acknowledgedCount: Int { lock.withLock { acknowledged.count } }
    func stop() { lock.withLock { stopped = true } }
    var snapshot: (acknowledged: [String], unknown: [String], failures: [String], gap: Duration) {
        lock.withLock { (acknowledged, outcomeUnknown, failures, longestGap) }
    }

    func run(_ store: PostgresStore) {
        var last = ContinuousClock.now
        for index in 0... {
            if lock.withLock({ stopped }) { return }
            var car = Car.sample("ha-\(index)")
            do {
                try car.save(ManagedObjectContext(store: store))
                let now = ContinuousClock.now
                lock.withLock {
                    acknowledged.append(car.name)
                    longestGap = max(longestGap, now - last)
                }
                last = now
            } catch let error as PostgresStoreError where error.code == .commitOutcomeUnknown {
                lock.withLock { outcomeUnknown.append(car.name) }
            } catch {
                lock.withLock { failures.append("\(car.name): \(error)") }
            }
        }
    }

    /// Saves through `store` on a thread of its own while `scripts/ha-ctl.sh failover` stops the primary
    /// (immediate) and promotes the standby (50 saves before, 50 after), then checks on a new connection to
    /// `url` that it is the new primary, that every acknowledged save is there once, and that the writer saw
    /// no error, and no outcome unknown (a `COMMIT` in flight at the kill is looked up on the new primary).
    ///
    /// - Parameter check: More checks on that connection (what a TLS test asks of it).
    /// - Returns: A line for the test's log: saves, losses, retries, the longest write gap, `ha-ctl`'s output.
    static func runAcrossAFailover(
        _ store: PostgresStore, url: String, schema: String, check: (Connection) throws -> Void = { _ in }
    ) throws -> String {
        let writer = FailoverWriter()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            writer.run(store)
            done.signal()
        }
        try HASetup.wait("the writer's first 50 saves") { writer.acknowledgedCount >= 50 }
        let before = writer.acknowledgedCount
        let log = try HASetup.run("failover")
        // Writes go on against the promoted server, through the same store.
        try HASetup.wait("50 saves after the failover") { writer.acknowledgedCount >= before + 50 }
        writer.stop()
        done.wait()

        let result = writer.snapshot
        #expect(result.failures.isEmpty, "errors the writer saw: \(result.failures.prefix(5))")
        // resolvesCommitOutcomes: a COMMIT in flight at the kill is looked up, never left unknown.
        #expect(result.unknown.isEmpty, "outcome unknown: \(result.unknown)")

        let table = SQLIdentifier("Car", schema: schema).quoted
        let connection = try Connection(url)
        defer { connection.close() }
        #expect(!(try HASetup.isStandby(connection)))
        try check(connection)
        let rows = try connection.query("SELECT name FROM \(table)")
        let stored = try (0..<rows.rowCount).map { try rows.decode(String.self, row: $0, column: 0) }
        // Every acknowledged save is on the new primary, once.
        #expect(Set(result.acknowledged).subtracting(stored).isEmpty)
        #expect(Set(stored).count == stored.count)
        #expect(Set(stored) == Set(result.acknowledged))
        let lost = Set(result.acknowledged).subtracting(stored).count
        return "\(result.acknowledged.count) saves acknowledged, \(lost) lost, \(result.unknown.count) outcome "
            + "unknown, \(result.failures.count) errors, \(store.statistics.retries) retries, longest write gap "
            + "\(result.gap); \(log.trimmingCharacters(in: .whitespacesAndNewlines))"
    }
}
