@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ

/// A failed benchmark check or setup step.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs WORKLOAD.md's operations in order and prints one line per operation.
final class Workload {
    let url: String
    let n: Int
    let model: ManagedObjectModel
    let admin: Connection
    var store: PostgresStore
    var failures: [String] = []

    init(url: String, n: Int) throws {
        self.url = url
        self.n = n
        self.model = try BenchModel.make()
        try SchemaMapping(model: model).validate()
        self.admin = try Connection(url)
        try admin.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(BenchModel.schema)) CASCADE")
        try admin.execute("CREATE SCHEMA \(SQLIdentifier.quote(BenchModel.schema))")
        // With the history tables, for the `.history` variants' store; the main store records nothing.
        try admin.execute(SchemaPrinter(model: model, schema: BenchModel.schema, recordsHistory: true).ddl)
        self.store = try PostgresStore(
            model: model,
            configuration: try .init(url: url, schema: BenchModel.schema).with {
                $0.resolvesCommitOutcomes = BenchModel.resolvesCommits
            })
    }

    /// Times `body`, prints the operation's line, and records a failed check.
    ///
    /// `body` gets a ``Phases`` to mark where the struct work (boxing or unboxing) ends and the store work
    /// starts, or the other way round; the split is printed as extra fields.
    func measure(_ op: String, rows: Int, _ body: (inout Phases) throws -> Void, check: () throws -> String?) {
        let before = store.statistics
        let cpuBefore = ResidentMemory.processorTime()
        var phases = Phases()
        do {
            try body(&phases)
        } catch {
            failures.append("\(op): \(error)")
            log("\(op) failed: \(error)")
            return
        }
        let elapsed = ContinuousClock.now - phases.start
        let cpu = ResidentMemory.processorTime() - cpuBefore
        let stats = store.statistics.since(before)
        // The timer has stopped (WORKLOAD.md: a write when it committed, a read when its structs are in
        // memory); what the op kept for its caller is released now, as the peers free their rows after
        // theirs. The release is printed (`release_s`), not counted in `seconds` or `cpu_s`.
        if phases.keepsObjects {
            let released = ContinuousClock.now
            phases.releaseKept()
            phases.note("release", ContinuousClock.now - released)
        }
        printLine(
            op: op, rows: rows, elapsed: elapsed,
            extra: "statements=\(stats.statements)" + phases.fields(total: elapsed)
                + " max_rss_bytes=\(ResidentMemory.peak())" + String(format: " cpu_s=%.6f", cpu))
        do {
            if let problem = try check() {
                failures.append("\(op): \(problem)")
                log("\(op) check failed: \(problem)")
            }
        } catch {
            failures.append("\(op): check: \(error)")
        }
    }

    func run() throws {
        // Each operation's inputs and results live only as long as its check, as in a program that does one
        // thing after another: the peak resident set is one operation's, not the sum of all of them.
        do {
            let employees = (1...n).map { BenchData.employee($0) }
            measure("insert", rows: n, { phases in try saveAll(employees, &phases) }) {
                try expectCount(n)
            }
        }
        do {
            let raised = (1...n).map { BenchData.employee($0, salaryDelta: 1000) }
            measure("upsert", rows: n, { phases in try saveAll(raised, &phases) }) {
                try expectSalaries(delta: 1000)
            }
        }
        // The same upsert of every row with history recorded.
        try withHistory(expected: 1) {
            let raised = (1...n).map { BenchData.employee($0, salaryDelta: 2000) }
            measure("upsert.history", rows: n, { phases in try saveAll(raised, &phases) }) {
                try expectSalaries(delta: 2000)
            }
        }

        try admin.execute("VACUUM ANALYZE \(table("Employee"))")

        try fetchByIDs()
        try queryPredicate()
        try runStream(rows: n)
        try runCompany()
        // The company saved again from the same state, with history recorded.
        try admin.execute("TRUNCATE \(table("Company")) CASCADE")
        try withHistory(expected: 1) { try saveCompany(op: "company_save.history") }
        try ConcurrentUpsert(workload: self).run()
        try withHistory(expected: ConcurrentUpsert.workers * ConcurrentUpsert.rounds) {
            try ConcurrentUpsert(workload: self, recordsHistory: true).run()
        }
    }

    private func expectSalaries(delta: Double) throws -> String? {
        if let problem = try expectCount(n) { return problem }
        let expected = (1...n).reduce(Decimal(0)) { $0 + Decimal(BenchData.baseSalary($1) + delta) }
        let sum = try admin.query("SELECT sum(salary)::numeric FROM \(table("Employee"))")
            .decode(Decimal.self, row: 0, column: 0)
        return sum == expected ? nil : "sum(salary) = \(sum), expected \(expected)"
    }

    func fetchByIDs() throws {
        let ids = (0..<n).map { k in Int64((k * 7919) % n + 1) }
        var fetched: [BenchEmployee] = []
        measure(
            "fetch_by_ids", rows: n,
            { phases in
                fetched = try query(BenchEmployee.self, .isIn(key: "id", ids.map { .int64($0) }), [], &phases)
            }
        ) {
            let sum = fetched.reduce(Int64(0)) { $0 + $1.id }
            guard fetched.count == n else { return "\(fetched.count) structs, expected \(n)" }
            return sum == Int64(n * (n + 1) / 2) ? nil : "sum of ids \(sum)"
        }

        // The opt-in path for reads that only want values: `queryStored`, straight from the store, with no
        // context and no object registered per row.
        fetched = []
        measure(
            "fetch_by_ids.stored", rows: n,
            { phases in
                fetched = try BenchEmployee.queryStored(store, predicate: .isIn(key: "id", ids.map { .int64($0) }))
                phases.mark("query")
            }
        ) {
            let sum = fetched.reduce(Int64(0)) { $0 + $1.id }
            guard fetched.count == n else { return "\(fetched.count) structs, expected \(n)" }
            return sum == Int64(n * (n + 1) / 2) ? nil : "sum of ids \(sum)"
        }
    }

    private func queryPredicate() throws {
        let expectedIDs = BenchData.predicateIDs(n: n)
        var matched: [BenchEmployee] = []
        let predicate: CVPredicate = .and([
            .comparison(key: "age", .greaterThan, .int16(30)),
            .comparison(key: "department", .equal, .string("Sales")),
        ])
        measure(
            "query_predicate", rows: expectedIDs.count,
            { phases in
                matched = try query(BenchEmployee.self, predicate, [CVSortDescriptor(key: "name")], &phases)
            }
        ) {
            matched.map(\.id) == expectedIDs ? nil : "got \(matched.count) rows, not the expected id sequence"
        }

        // The same query written with `#Predicate` and `SortDescriptor`, through the public typed API,
        // translation included. A process's first translation of a predicate type also pays the runtime's
        // one-time conformance and field-metadata lookups (about 1.4 ms here, then 20-30 µs): it is timed
        // apart, as `first_translation_s`, and the op measures a server's steady state, as the string-keyed
        // op does after the fetches before it have warmed its path.
        let first = ContinuousClock.now
        let translated = Result {
            try BenchEmployee.fetchRequest(
                store.model, predicate: #Predicate { ($0.age ?? 0) > 30 && $0.department == "Sales" },
                sortBy: [SortDescriptor(\.name)])
        }
        let firstTranslation = ContinuousClock.now - first
        var typed: [BenchEmployee] = []
        measure(
            "query_predicate.typed", rows: expectedIDs.count,
            { phases in
                _ = try translated.get()
                typed = try BenchEmployee.query(
                    ManagedObjectContext(store: store),
                    predicate: #Predicate { ($0.age ?? 0) > 30 && $0.department == "Sales" },
                    sortBy: [SortDescriptor(\.name)])
                phases.mark("query")
                phases.note("first_translation", firstTranslation)
            }
        ) {
            typed.map(\.id) == expectedIDs ? nil : "got \(typed.count) rows, not the expected id sequence"
        }

        var stored: [BenchEmployee] = []
        measure(
            "query_predicate.stored", rows: expectedIDs.count,
            { phases in
                stored = try BenchEmployee.queryStored(
                    store, predicate: predicate, sortDescriptors: [CVSortDescriptor(key: "name")])
                phases.mark("query")
            }
        ) {
            stored.map(\.id) == expectedIDs ? nil : "got \(stored.count) rows, not the expected id sequence"
        }
    }

    /// `op=stream`: every employee through `stream`, in batches of 1,000, with the largest resident set seen
    /// while streaming (sampled per batch from /proc/self/statm; `getrusage`'s peak covers the whole run).
    func runStream(rows expected: Int) throws {
        var count = 0
        var lastID: Int64 = 0
        var ordered = true
        var peak = ResidentMemory.current()
        let start = ContinuousClock.now
        try BenchEmployee.stream(store, predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")]) {
            (batch: [BenchEmployee]) in
            for employee in batch {
                if employee.id <= lastID { ordered = false }
                lastID = employee.id
            }
            count += batch.count
            peak = max(peak, ResidentMemory.current())
        }
        let elapsed = ContinuousClock.now - start
        printLine(op: "stream", rows: count, elapsed: elapsed, extra: "peak_rss_bytes=\(peak)")
        if count != expected || !ordered {
            failures.append("stream: \(count) rows (expected \(expected)), in order: \(ordered)")
        }
    }

    /// `corevalue-bench --stream URL N`: N employees generated by the server, then streamed (`op=stream`).
    static func streamOnly(url: String, n: Int) throws -> Workload {
        let workload = try generated(url: url, n: n)
        try workload.runStream(rows: n)
        return workload
    }

    /// `corevalue-bench --fetch URL N R`: N employees generated by the server, then `fetch_by_ids` R times,
    /// for profilers.
    static func fetchOnly(url: String, n: Int, repeats: Int) throws -> Workload {
        let workload = try generated(url: url, n: n)
        try workload.admin.execute("VACUUM ANALYZE \(workload.table("Employee"))")
        for _ in 0..<repeats { try workload.fetchByIDs() }
        return workload
    }

    /// A workload whose Employee table holds N rows the server generated (ids 1...N).
    static func generated(url: String, n: Int) throws -> Workload {
        let workload = try Workload(url: url, n: n)
        let table = workload.table("Employee")
        try workload.admin.execute(
            """
            INSERT INTO \(table) (id, name, age, position, department, salary, "startDate", active)
            SELECT g, 'employee ' || g, (20 + g % 45)::smallint, 'Engineer', 'Sales', 50000 + g % 1000,
                   timestamptz '2020-01-01' + g * interval '1 minute', g % 2 = 0
            FROM generate_series(1, \(n)) AS g
            """)
        return workload
    }

    /// `saveAll` for unique structs, as a user calls it (boxing and the store in one call: `saveAll` may skip
    /// the lookup a separate `toObjects` makes).
    private func saveAll(_ structs: [BenchEmployee], _ phases: inout Phases) throws {
        let context = ManagedObjectContext(store: store)
        try structs.saveAll(context)
        phases.mark("save")
        // A user's context outlives its save (a request's unit of work ends after it): released after the timer.
        phases.keep(context)
    }

    /// `query`, as a user calls it (README): the context's fetch and the unboxing in one call, which unboxes
    /// the rows that came while the store reads the next ones.
    func query<T: BoxingStruct & UnboxingStruct>(
        _ type: T.Type, _ predicate: CVPredicate, _ sort: [CVSortDescriptor], _ phases: inout Phases
    ) throws -> [T] where T.StructureType == T {
        let context = ManagedObjectContext(store: store)
        let structs: [T] = try T.query(context, predicate: predicate, sortDescriptors: sort)
        phases.mark("query")
        // The structs are in memory: the timer stops here, and the context that holds the objects is released
        // after it, as a request's context outlives its query.
        phases.keep(context)
        return structs
    }

    func table(_ name: String) -> String {
        SQLIdentifier(name, schema: BenchModel.schema).quoted
    }

    func expectCount(_ expected: Int) throws -> String? {
        let count = try admin.query("SELECT count(*) FROM \(table("Employee"))").decode(Int64.self, row: 0, column: 0)
        return count == Int64(expected) ? nil : "\(count) rows, expected \(expected)"
    }

    /// The stored member ids of Acme, in position order, must equal `ids`.
}

/// Where an operation's time went: named phases in order, printed as `<name>_s=<seconds>` fields.
struct Phases {
    let start = ContinuousClock.now
    private var last = ContinuousClock.now
    private var marks: [(String, Duration)] = []
    /// What the timed body hands back to its caller (a context and its objects), released after the timer.
    private var kept: [AnyObject] = []

    /// Keeps `object` alive until the timer has stopped.
    mutating func keep(_ object: AnyObject) {
        kept.append(object)
    }

    /// Whether the body kept anything.
    var keepsObjects: Bool { !kept.isEmpty }

    /// Releases what the body kept.
    mutating func releaseKept() {
        kept.removeAll()
    }

    /// Ends the phase called `name` now.
    mutating func mark(_ name: String) {
        let now = ContinuousClock.now
        marks.append((name, now - last))
        last = now
    }

    /// Records a duration measured outside the timed body under `name`, without ending a phase.
    mutating func note(_ name: String, _ duration: Duration) {
        marks.append((name, duration))
    }

    /// The phases as extra output fields.
    func fields(total: Duration) -> String {
        marks.map { " \($0.0)_s=\(String(format: "%.6f", seconds($0.1)))" }.joined()
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Prints one operation line in WORKLOAD.md's format.
func printLine(op: String, rows: Int, elapsed: Duration, extra: String) {
    let total = seconds(elapsed)
    let rate = total > 0 ? Double(rows) / total : 0
    emit(
        "op=\(op) n=\(rows) seconds=\(String(format: "%.6f", total)) rows_per_s=\(String(format: "%.1f", rate))"
            + (extra.isEmpty ? "" : " " + extra))
}

/// Writes a line to standard output at once (unbuffered: the parent of a worker reads it through a pipe).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes a line to standard error.
func log(_ message: String) {
    FileHandle.standardError.write(Data(("corevalue-bench: " + message + "\n").utf8))
}

/// The process's resident set now, from /proc/self/statm (0 where there is none).
enum ResidentMemory {
    static func current() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The process's CPU time so far (user and system, every thread), in seconds, from `getrusage`: beside
    /// an op's `seconds`, what the client itself spent.
    static func processorTime() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The process's peak resident set so far, from `getrusage` (kilobytes on Linux, bytes on Darwin).
    static func peak() -> Int {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return Int(usage.ru_maxrss) * 1024
        #else
            getrusage(RUSAGE_SELF, &usage)
            return Int(usage.ru_maxrss)
        #endif
    }
}
