@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// The multi-server setup `make test-ha` starts (`scripts/ha-up.sh`): a primary and a synchronous streaming
/// standby on loopback, pgbouncer in front, and `scripts/ha-ctl.sh` to fail over and restart servers.
enum HASetup {
    static let environment = ProcessInfo.processInfo.environment
    /// Both nodes, `target_session_attrs=read-write`: whichever is the primary.
    static var primaryURL: String? { environment["HA_MULTI_URL"] }
    /// Both nodes, `target_session_attrs=prefer-standby`.
    static var preferStandbyURL: String? { environment["HA_STANDBY_PREFER_URL"] }
    /// pgbouncer in transaction mode, in front of the primary.
    static var pgbouncerURL: String? { environment["HA_PGBOUNCER_URL"] }
    static var control: String? { environment["HA_CTL"] }
    static var isAvailable: Bool {
        primaryURL != nil && preferStandbyURL != nil && pgbouncerURL != nil && control != nil
    }

    /// Runs `scripts/ha-ctl.sh <command>` and waits for it; its output is returned for the test's log.
    ///
    /// Spawned and reaped directly (`posix_spawn`, `waitpid`): `Foundation.Process` sometimes never notices
    /// the exit of a script that started daemons.
    @discardableResult
    static func run(_ arguments: String...) throws -> String {
        let script = try #require(control)
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("ha-ctl-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv = ([script] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, script, &actions, nil, argv, environ)
        try #require(spawned == 0, "could not start \(script): errno \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        // Exited normally with 0: WIFEXITED and WEXITSTATUS, which Swift does not import.
        try #require(status & 0x7f == 0 && (status >> 8) & 0xff == 0, "ha-ctl \(arguments) failed: \(output)")
        return output
    }

    /// Whether the server at the host and port of `connection` is a standby.
    static func isStandby(_ connection: Connection) throws -> Bool {
        try connection.query("SELECT pg_is_in_recovery()").decode(Bool.self, row: 0, column: 0)
    }
}

/// What a user can rely on when PostgreSQL is several servers, tried on real ones. These tests change the
/// servers (failovers, restarts), so they run one at a time, only in `make test-ha`.
@Suite(.serialized, .enabled(if: HASetup.isAvailable, "needs the servers of scripts/ha-up.sh (make test-ha)"))
struct HighAvailabilityTests {
    /// Writes made by one thread, one save each, until told to stop.
    final class Writer: @unchecked Sendable {
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
    }

    /// Waits (bounded) until `condition` holds, polling every 20 ms.
    private func wait(_ what: String, timeout: Duration = .seconds(60), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not within \(timeout): \(what)")
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    @Test func aWriterAcrossAFailoverLosesNoAcknowledgedWriteAndSeesNoError() throws {
        try TestDatabase.withExampleStore(poolSize: 2, configure: { $0.failoverBudget = .seconds(30) }) {
            store, url, schema in
            let writer = Writer()
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                writer.run(store)
                done.signal()
            }
            try wait("the writer's first 50 saves") { writer.acknowledgedCount >= 50 }
            let before = writer.acknowledgedCount
            let log = try HASetup.run("failover")
            // Writes go on against the promoted server, through the same store.
            try wait("50 saves after the failover") { writer.acknowledgedCount >= before + 50 }
            writer.stop()
            done.wait()

            let result = writer.snapshot
            #expect(result.failures.isEmpty, "errors the writer saw: \(result.failures.prefix(5))")
            // A COMMIT in flight at the kill is looked up on the new primary (resolvesCommitOutcomes): no save
            // ends with its outcome unknown.
            #expect(result.unknown.isEmpty, "outcome unknown: \(result.unknown)")

            let table = SQLIdentifier("Car", schema: schema).quoted
            let check = try Connection(url)
            defer { check.close() }
            #expect(!(try HASetup.isStandby(check)))
            let rows = try check.query("SELECT name FROM \(table)")
            let stored = try (0..<rows.rowCount).map { try rows.decode(String.self, row: $0, column: 0) }
            // Every acknowledged save is on the new primary, once.
            #expect(Set(result.acknowledged).subtracting(stored).isEmpty)
            #expect(Set(stored).count == stored.count)
            #expect(Set(stored) == Set(result.acknowledged))
            let lost = Set(result.acknowledged).subtracting(stored).count
            print(
                "ha: \(result.acknowledged.count) saves acknowledged, \(lost) lost, \(result.unknown.count) outcome "
                    + "unknown, \(result.failures.count) errors, \(store.statistics.retries) retries, longest write gap "
                    + "\(result.gap); \(log.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    @Test func aListenerAcrossAFailoverListensAgainAndReportsTheGap() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { _, url, schema in
            var configuration = try PostgresStore.Configuration(url: url, schema: schema)
            configuration.notificationChannel = "cv_" + schema
            let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { store.close() }
            let listener = try store.makeChangeListener()
            defer { listener.close() }
            var first = Car.sample("before the failover")
            try first.save(ManagedObjectContext(store: store))
            var heard: [ChangeListener.Event] = []
            try wait("the first change") {
                heard += try listener.events(timeout: .milliseconds(100))
                return !heard.isEmpty
            }
            #expect(heard.count == 1)

            try HASetup.run("failover")
            var gap: ChangeListener.Gap?
            try wait("the listener's report of its gap") {
                for case .mayHaveMissedChanges(let reported) in try listener.events(timeout: .milliseconds(100)) {
                    gap = reported
                }
                return gap != nil
            }
            #expect(listener.isUsable)
            var second = Car.sample("after the failover")
            try second.save(ManagedObjectContext(store: store))
            var after: [StoreChange] = []
            try wait("the change after the failover") {
                for case .change(let change) in try listener.events(timeout: .milliseconds(100)) {
                    after.append(change)
                }
                return !after.isEmpty
            }
            #expect(after.flatMap(\.inserted) == [try #require(second.objectID)])
        }
    }

    @Test func aStoreBehindPgbouncerIsHeardThroughItsDirectListenConnection() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { _, url, schema in
            var configuration = try PostgresStore.Configuration(url: try #require(HASetup.pgbouncerURL), schema: schema)
            configuration.notificationChannel = "cv_" + schema
            configuration.listenConnection = try ConnectionConfiguration(url)
            let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { store.close() }
            let listener = try store.makeChangeListener()
            defer { listener.close() }
            var car = Car.sample("through pgbouncer")
            try car.save(ManagedObjectContext(store: store))
            var heard: [StoreChange] = []
            try wait("the change saved through pgbouncer") {
                heard += try listener.next(timeout: .milliseconds(100))
                return !heard.isEmpty
            }
            #expect(heard.flatMap(\.inserted) == [try #require(car.objectID)])
        }
    }

    @Test func aReadOnlyStoreReadsThroughAStandbyRestartAndReturnsToTheStandby() throws {
        try TestDatabase.withExampleStore { writer, _, schema in
            var cars = (0..<5).map { Car.sample("read \($0)") }
            try cars.saveAll(ManagedObjectContext(store: writer))

            let name = "cvro_" + schema.suffix(8)
            let url = try #require(HASetup.preferStandbyURL) + "&application_name=\(name)"
            var configuration = try PostgresStore.Configuration(url: url, schema: schema)
            configuration.readOnly = true
            configuration.poolSize = 2
            configuration.maxConnectionLifetime = .milliseconds(500)
            let reader = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { reader.close() }

            /// Which kinds of server the reader's connections are on now.
            func readerIsOn() throws -> (standby: Bool, primary: Bool) {
                let admin = try Connection(try #require(HASetup.primaryURL))
                defer { admin.close() }
                let query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
                let onPrimary = try admin.query(query, [try PostgresValue(name)]).decode(Int64.self, row: 0, column: 0)
                let standby = try? Connection(try #require(HASetup.preferStandbyURL))
                defer { standby?.close() }
                let onStandby =
                    try standby.map { connection in
                        try HASetup.isStandby(connection)
                            ? connection.query(query, [try PostgresValue(name)]).decode(Int64.self, row: 0, column: 0)
                            : 0
                    } ?? 0
                return (onStandby > 0, onPrimary > 0)
            }
            func read() throws {
                let read: [Car] = try Car.query(ManagedObjectContext(store: reader), predicate: nil)
                #expect(read.count == cars.count)
            }

            try read()
            #expect(try readerIsOn() == (standby: true, primary: false))

            // The standby goes away: reads go on (on the primary), without an error.
            try HASetup.run("stop-standby")
            for _ in 0..<20 { try read() }
            #expect(try readerIsOn().primary)

            // It comes back: within the connection lifetime the reader is on it again.
            try HASetup.run("start-standby")
            try wait("the reader back on the standby") {
                try read()
                let on = try readerIsOn()
                return on.standby && !on.primary
            }
        }
    }
}
