@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ

/// An account of the request-path workload (WORKLOAD.md, "Request path"), unique by `id`.
struct Account: CVManagedUniqueStruct, Sendable {
    static let EntityName = "Account"
    static let IdentifierName = "id"
    func IdentifierValue() -> IdentifierType { id }

    var id: Int64
    var name: String
    var balance: Int64
    var updated: Date

    static func fromObject(_ object: ManagedObject) throws -> Account {
        Account(
            id: try object <| "id", name: try object <| "name", balance: try object <| "balance",
            updated: try object <| "updated")
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Account") {
                Attribute("id", .int64, unique: true)
                Attribute("name", .string)
                Attribute("balance", .int64)
                Attribute("updated", .date)
            }
        }
    }
}

/// The request path: one struct read by its identifier in a fresh context, maybe changed and saved, serially
/// and from many tasks at once; one `op=` line per kind with throughput and latency percentiles.
struct Requests {
    static let schema = "bench_requests"
    /// 2020-09-13T12:26:40Z.
    static let initialDate = Date(timeIntervalSince1970: 1_600_000_000)

    let url: String
    let n: Int
    let ops: Int
    let tasks: Int
    let poolSize: Int

    /// The identifier the i-th operation works on.
    func key(_ i: Int) -> Int64 { Int64((i * 7919) % n + 1) }

    /// Makes the schema and saves the accounts (untimed), runs the three ops; returns the failed checks.
    func run() async throws -> [String] {
        let serial = try serialOps()
        defer { serial.admin.close() }
        var configuration = serial.configuration
        configuration.poolSize = poolSize
        let pooled = try PostgresStore(model: try Account.model(), configuration: configuration)
        defer { pooled.close() }
        // Connected before the clock starts, as a service does at startup: asyncpg's pool opens its POOL
        // connections when it is made, and pgbench leaves connecting out of its rate.
        try pooled.openConnections()
        emit(try await mixed(pooled))
        // Not part of the workload's lines, on request: the same tasks preferring the store's task executor, and
        // the same tasks doing each read-change-save in one `perform`.
        let environment = ProcessInfo.processInfo.environment
        let variants = [
            environment["COREVALUE_BENCH_MIXED_PREFERRING"] == "1" ? MixedVariant.preferring : nil,
            environment["COREVALUE_BENCH_MIXED_PERFORM"] == "1" ? MixedVariant.perform : nil,
        ].compactMap { $0 }
        for variant in variants { emit(try await mixed(pooled, variant)) }
        let rounds = 1 + variants.count
        return try check(serial.admin, expected: Int64(ops + rounds * tasks * (ops / tasks)), serial.failures)
    }

    /// The serial ops only (`--requests-serial`), all on the calling thread, so that a profiler that cannot
    /// follow the async API's threads (valgrind, here) counts their instructions.
    func runSerial() throws -> [String] {
        let serial = try serialOps()
        defer { serial.admin.close() }
        return try check(serial.admin, expected: Int64(ops), serial.failures)
    }

    /// Makes the schema, saves the accounts (untimed), runs `get` and `update`; returns an open admin
    /// connection, the store's configuration and the failed checks.
    private func serialOps() throws -> (
        admin: Connection, configuration: PostgresStore.Configuration, failures: [String]
    ) {
        let model = try Account.model()
        let admin = try Connection(url)
        do {
            try admin.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(Self.schema)) CASCADE")
            try admin.execute("CREATE SCHEMA \(SQLIdentifier.quote(Self.schema))")
            try admin.execute(SchemaPrinter(model: model, schema: Self.schema).ddl)
            var configuration = PostgresStore.Configuration(
                connection: try ConnectionConfiguration(url), schema: Self.schema)
            configuration.poolSize = 1
            configuration.resolvesCommitOutcomes = BenchModel.resolvesCommits
            let serial = try PostgresStore(model: model, configuration: configuration)
            defer { serial.close() }
            let accounts = (1...n).map {
                Account(id: Int64($0), name: "account \($0)", balance: 0, updated: Self.initialDate)
            }
            try accounts.saveAll(ManagedObjectContext(store: serial))
            try admin.execute("VACUUM ANALYZE \(SQLIdentifier.quote(Self.schema)).\(SQLIdentifier.quote("Account"))")
            for i in 0..<50 { _ = try read(key(i), serial) }

            var failures: [String] = []
            let get = try timed("get", count: ops, serial.statistics) { i in
                let account = try read(key(i), serial)
                if account.id != key(i) { failures.append("get: read \(account.id) for \(key(i))") }
            } statistics: {
                serial.statistics
            }
            emit(get)
            let update = try timed("update", count: ops, serial.statistics) { i in
                try increment(key(i), serial)
            } statistics: {
                serial.statistics
            }
            emit(update)
            return (admin, configuration, failures)
        } catch {
            admin.close()
            throw error
        }
    }

    /// `failures`, and one more unless the balances add up to `expected`.
    private func check(_ admin: Connection, expected: Int64, _ failures: [String]) throws -> [String] {
        let sum = try admin.query("SELECT sum(balance)::bigint FROM \(SQLIdentifier.quote(Self.schema)).\"Account\"")
            .decode(Int64.self, row: 0, column: 0)
        return failures + (sum == expected ? [] : ["sum(balance) = \(sum), expected \(expected)"])
    }

    /// Reads one account in a fresh context, as a request does.
    func read(_ id: Int64, _ store: PostgresStore) throws -> Account {
        let context = ManagedObjectContext(store: store)
        let found: [Account] = try Account.query(context, predicate: .key("id") == id)
        guard let account = found.first else { throw BenchFailure(description: "account \(id) not found") }
        return account
    }

    /// Reads one account in a fresh context, adds one to its balance and saves it.
    func increment(_ id: Int64, _ store: PostgresStore) throws {
        try increment(id, in: ManagedObjectContext(store: store))
    }

    /// Reads one account in `context`, adds one to its balance and saves it.
    func increment(_ id: Int64, in context: ManagedObjectContext) throws {
        let found: [Account] = try Account.query(context, predicate: .key("id") == id)
        guard var account = found.first else { throw BenchFailure(description: "account \(id) not found") }
        account.balance += 1
        account.updated = Date()
        try account.save(context)
    }

    /// The same through the async API.
    func increment(_ id: Int64, _ store: PostgresStore) async throws {
        let context = ManagedObjectContext(store: store)
        let found: [Account] = try await Account.query(context, predicate: .key("id") == id)
        guard var account = found.first else { throw BenchFailure(description: "account \(id) not found") }
        account.balance += 1
        account.updated = Date()
        try await account.save(context)
    }

    /// The same increment in one `perform`: the read, the change and the save hand off to a store thread once.
    func incrementInOnePerform(_ id: Int64, _ store: PostgresStore) async throws {
        let context = ManagedObjectContext(store: store)
        try await context.perform { try increment(id, in: context) }
    }

    /// How `mixed`'s tasks run: as the workload says (`plain`), preferring the store's task executor
    /// (`op=mixed_preferring`), or each increment in one `perform` (`op=mixed_perform`).
    enum MixedVariant: String {
        case plain = "mixed"
        case preferring = "mixed_preferring"
        case perform = "mixed_perform"
    }

    /// TASKS tasks at once, each doing OPS/TASKS increments through the async API on a pool of POOL.
    func mixed(_ store: PostgresStore, _ variant: MixedVariant = .plain) async throws -> String {
        let preferring = variant == .preferring
        let perTask = ops / tasks
        let before = store.statistics
        let cpuBefore = ResidentMemory.processorTime()
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for t in 0..<tasks {
                group.addTask(executorPreference: preferring ? store.taskExecutor : nil) {
                    var mine: [Duration] = []
                    mine.reserveCapacity(perTask)
                    for j in 0..<perTask {
                        let began = ContinuousClock.now
                        if variant == .perform {
                            try await incrementInOnePerform(key(t * perTask + j), store)
                        } else {
                            try await increment(key(t * perTask + j), store)
                        }
                        mine.append(ContinuousClock.now - began)
                    }
                    return mine
                }
            }
            var all: [Duration] = []
            for try await part in group { all += part }
            return all
        }
        let wall = ContinuousClock.now - start
        let cpu = ResidentMemory.processorTime() - cpuBefore
        return Self.line(variant.rawValue, latencies, wall, cpu, store.statistics.since(before))
    }

    /// Runs `body` for 0..<count serially, timing each call.
    func timed(
        _ op: String, count: Int, _ before: StoreStatistics, _ body: (Int) throws -> Void,
        statistics: () -> StoreStatistics
    ) throws -> String {
        var latencies: [Duration] = []
        latencies.reserveCapacity(count)
        let cpuBefore = ResidentMemory.processorTime()
        let start = ContinuousClock.now
        for i in 0..<count {
            let began = ContinuousClock.now
            try body(i)
            latencies.append(ContinuousClock.now - began)
        }
        let wall = ContinuousClock.now - start
        let cpu = ResidentMemory.processorTime() - cpuBefore
        return Self.line(op, latencies, wall, cpu, statistics().since(before))
    }

    /// WORKLOAD.md's line: `op= n= seconds= ops_per_s= p50_ms= p99_ms=`, then the statements and round trips
    /// per operation and the client's own CPU time per operation (every thread; what a busy server with
    /// few cores also pays, and steadier from run to run than the wall time).
    static func line(
        _ op: String, _ latencies: [Duration], _ wall: Duration, _ cpuSeconds: Double, _ stats: StoreStatistics
    ) -> String {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = min(sorted.count - 1, max(0, Int(Double(sorted.count) * p) - 1))
            return seconds(sorted[index]) * 1000
        }
        let total = seconds(wall)
        let count = Double(max(1, latencies.count))
        return "op=\(op) n=\(latencies.count) seconds=\(String(format: "%.6f", total)) "
            + "ops_per_s=\(String(format: "%.1f", Double(latencies.count) / total)) "
            + "p50_ms=\(String(format: "%.3f", percentile(0.5))) p99_ms=\(String(format: "%.3f", percentile(0.99))) "
            + "statements_per_op=\(String(format: "%.2f", Double(stats.statements) / count)) "
            + "round_trips_per_op=\(String(format: "%.2f", Double(stats.roundTrips) / count)) "
            + "cpu_us_per_op=\(String(format: "%.1f", cpuSeconds * 1_000_000 / count))"
    }
}
