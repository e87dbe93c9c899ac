@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// History read by processes that die: `corevalue-worker history-writer`s save at random and
/// `history-reader`s stream history from tokens they keep in their logs, while the test kills both with
/// SIGKILL. Every reader must still see every committed transaction exactly once.
@Suite struct HistoryProcessTests {
    @Test func writersAndReadersKilledAtRandomStillSeeEveryCommittedTransactionOnce() throws {
        try TestDatabase.withSchema { url, schema in
            try Migrator(url: url, schema: schema).migrate(model: ExampleModel.model, recordsHistory: true)
            // 150 saves per writer process: a few seconds' work, so that most of them run into a kill or
            // finish and start again.
            let workload = try HistoryWorkload(url: url, schema: schema, operations: 150)
            defer { workload.close() }
            for reader in 0..<2 { try workload.startReader(reader) }
            for writer in 0..<8 { try workload.startWriter(writer) }
            // Kills for about 12 s: a writer or a reader every 0.2 to 0.6 s, started again at once (a writer with
            // a new seed); writers that finished start again too, so that eight keep writing.
            let deadline = ContinuousClock.now + .seconds(12)
            while ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: workload.random(in: 0.2...0.6))
                try workload.killOne()
                try workload.restartFinishedWriters()
            }
            try workload.finish()
            let report = try workload.check()
            print("history processes (seed \(workload.seed)): \(report.summary); \(workload.killSummary)")
            #expect(
                report.problems.isEmpty,
                "seed \(workload.seed), logs in \(workload.directory.path): \(report.problems.prefix(20))")
            #expect(report.acknowledged > 0 && report.transactions > 0)
            if report.problems.isEmpty, ProcessInfo.processInfo.environment["CV_HISTORY_KEEP_LOGS"] == nil {
                workload.removeLogs()
            }
        }
    }
}

/// History writer and reader processes on one schema, each with its log in a directory of its own; the test
/// kills and restarts them, then ``finish()`` stops them and ``check()`` compares their logs with history.
final class HistoryWorkload {
    let url: String
    let schema: String
    let seed: UInt64
    /// How many saves each writer process makes.
    let operations: Int
    let directory: URL
    /// The application name of every worker's connections, to find their transactions on the server.
    let applicationName: String
    private var generator: SeededRandom
    private var writers: [Int: Process] = [:]
    private var readers: [Int: Process] = [:]
    private(set) var writerKills = 0
    private(set) var readerKills = 0
    private(set) var writerStarts = 0
    /// Writer processes that exited with an error (not killed by the test).
    private(set) var writerFailures: [String] = []

    /// `CV_HISTORY_SEED` replays a run's writers (their timing, and so what they collide with, differs).
    init(url: String, schema: String, operations: Int) throws {
        self.operations = operations
        seed =
            ProcessInfo.processInfo.environment["CV_HISTORY_SEED"].flatMap { UInt64($0) } ?? .random(in: 1...(1 << 40))
        generator = SeededRandom(seed: seed)
        self.schema = schema
        applicationName = "cvh_" + schema.suffix(12)
        self.url = url + (url.contains("?") ? "&" : "?") + "application_name=\(applicationName)"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cv-history-\(schema)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func random(in range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &generator) }

    func log(_ name: String) -> String { directory.appendingPathComponent(name + ".log").path }

    private func spawn(_ arguments: [String], errors: String) throws -> Process {
        let process = Process()
        process.executableURL = try CommandLineTests.binary(named: "corevalue-worker")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let descriptor = open(errors, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw PostgresStoreError(.invalidConfiguration, "cannot open \(errors)") }
        process.standardError = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try process.run()
        return process
    }

    func startWriter(_ index: Int) throws {
        let path = log("writer-\(index)")
        let seed = generator.next() >> 24
        writers[index] = try spawn(
            ["history-writer", url, schema, String(seed), String(operations), path], errors: path + ".err")
        writerStarts += 1
    }

    func startReader(_ index: Int) throws {
        let path = log("reader-\(index)")
        readers[index] = try spawn(["history-reader", url, schema, path], errors: path + ".err")
    }

    private func kill(_ process: Process) {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGKILLs one running process picked at random (a reader about one time in three) and starts it again:
    /// a writer with a new seed, a reader from the token in its log.
    func killOne() throws {
        let running = writers.filter { $0.value.isRunning }.keys.sorted()
        if Double.random(in: 0..<1, using: &generator) < 0.3 || running.isEmpty {
            guard let index = readers.keys.sorted().randomElement(using: &generator), let process = readers[index]
            else { return }
            kill(process)
            readerKills += 1
            try startReader(index)
        } else if let index = running.randomElement(using: &generator), let process = writers[index] {
            kill(process)
            writerKills += 1
            try startWriter(index)
        }
    }

    /// Kills one reader without starting it again.
    func killReader(_ index: Int) {
        guard let process = readers.removeValue(forKey: index) else { return }
        kill(process)
        readerKills += 1
    }

    func restartFinishedWriters() throws {
        for (index, process) in writers.sorted(by: { $0.key < $1.key }) where !process.isRunning {
            if process.terminationStatus != 0 {
                writerFailures.append("writer \(index) exited with \(process.terminationStatus)")
            }
            try startWriter(index)
        }
    }

    var killSummary: String {
        "\(writerKills) writer kills, \(readerKills) reader kills, \(writerStarts) writer processes"
    }

    /// Waits (bounded) for every writer to end, then for every transaction its connections left on the server
    /// to end (the backend of a killed writer may still commit or roll back), then stops the readers: each
    /// exits once a read begun after its stop file appeared found nothing.
    func finish(timeout: Duration = .seconds(60)) throws {
        let deadline = ContinuousClock.now + timeout
        for (index, process) in writers.sorted(by: { $0.key < $1.key }) {
            while process.isRunning {
                guard ContinuousClock.now < deadline else { throw failure("writer \(index) did not end") }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.terminationStatus != 0 || process.terminationReason != .exit {
                throw failure("writer \(index) exited with \(process.terminationStatus)")
            }
        }
        while try openWriteTransactions() > 0 {
            guard ContinuousClock.now < deadline else { throw failure("the writers' transactions did not end") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        for index in readers.keys {
            _ = FileManager.default.createFile(atPath: log("reader-\(index)") + ".stop", contents: nil)
        }
        for (index, process) in readers.sorted(by: { $0.key < $1.key }) {
            while process.isRunning {
                guard ContinuousClock.now < deadline else { throw failure("reader \(index) did not stop") }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if process.terminationStatus != 0 {
                throw failure("reader \(index) exited with \(process.terminationStatus)")
            }
        }
    }

    private func failure(_ message: String) -> PostgresStoreError {
        PostgresStoreError(.unexpectedResult, "\(message) (logs in \(directory.path))")
    }

    /// Transactions of the workers' connections that hold a transaction ID (have written) and are still open.
    private func openWriteTransactions() throws -> Int64 {
        let connection = try Connection(url)
        defer { connection.close() }
        return try connection.query(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND backend_xid IS NOT NULL "
                + "AND pid <> pg_backend_pid()",
            [try PostgresValue(applicationName)]
        ).decode(Int64.self, row: 0, column: 0)
    }

    /// How many saves the writers' logs acknowledge so far.
    func acknowledgedCount() -> Int {
        (try? HistoryLogs(directory: directory).writerLines.filter { $0.outcome == "ack" }.count) ?? 0
    }

    /// Every transaction of the schema's history, read from the start in pages by a store of the test's own.
    func fullHistory() throws -> [HistoryTransaction] {
        var configuration = try PostgresStore.Configuration(url: url, schema: schema)
        configuration.recordsHistory = true
        configuration.failoverBudget = .seconds(30)
        let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
        defer { store.close() }
        var all: [HistoryTransaction] = []
        var token: HistoryToken?
        while true {
            let page = try store.history(after: token, limit: 1_000)
            all += page
            guard page.count == 1_000, let last = page.last else { return all }
            token = last.token
        }
    }

    func check() throws -> HistoryReport {
        var report = try HistoryReport(logs: HistoryLogs(directory: directory), history: fullHistory())
        report.add(writerFailures)
        return report
    }

    /// Kills what still runs (a test that failed half way).
    func close() {
        for process in Array(writers.values) + Array(readers.values) where process.isRunning { kill(process) }
    }

    func removeLogs() { try? FileManager.default.removeItem(at: directory) }
}

/// The lines of a workload's logs (the worker's `WriterLine` and `ReaderLine`, read back).
struct HistoryLogs {
    struct Change: Codable, Hashable, CustomStringConvertible {
        var entity: String
        var key: Int64
        var kind: String
        var version: Int64?

        init(entity: String, key: Int64, kind: String, version: Int64?) {
            self.entity = entity
            self.key = key
            self.kind = kind
            self.version = version
        }

        init(_ change: HistoryChange) {
            self.init(
                entity: change.entityName, key: change.objectID.primaryKey ?? -1, kind: change.kind.rawValue,
                version: change.version)
        }

        var description: String { "\(kind) \(entity) \(key) v\(version.map(String.init) ?? "-")" }
    }

    struct WriterLine: Codable {
        var outcome: String
        var name: String
        var changes: [Change]
        var error: String?
    }

    struct ReaderLine: Codable {
        var number: Int64
        var name: String?
        var changes: [Change]
        var token: HistoryToken
    }

    var writerLines: [WriterLine] = []
    var readers: [(name: String, lines: [ReaderLine])] = []
    /// Lines that do not decode (other than a torn last one, which a kill may leave).
    var problems: [String] = []

    init(directory: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".log") }
        for file in files.sorted() {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            lines.removeLast()  // empty after the last newline, or a torn line
            if file.hasPrefix("writer-") {
                writerLines += lines.compactMap { decode(WriterLine.self, $0, file) }
            } else {
                readers.append((file, lines.compactMap { decode(ReaderLine.self, $0, file) }))
            }
        }
    }

    private mutating func decode<T: Decodable>(_ type: T.Type, _ line: Data.SubSequence, _ file: String) -> T? {
        do {
            return try JSONDecoder().decode(type, from: Data(line))
        } catch {
            problems.append("\(file): a line that does not decode: \(String(decoding: line, as: UTF8.self))")
            return nil
        }
    }
}

/// What a workload's logs say against the full history: each reader saw every transaction of it exactly once,
/// tokens and object versions ascending; every acknowledged save is there once with its changes, no failed
/// one is, and a save whose outcome is unknown (a lost `COMMIT`, or a writer killed during it) is at most once.
struct HistoryReport {
    private(set) var problems: [String]
    private(set) var transactions = 0
    private(set) var acknowledged = 0
    private(set) var unknown = (count: 0, committed: 0)
    private(set) var inFlight = (count: 0, committed: 0)
    private(set) var failed = 0
    private(set) var empty = 0
    private(set) var readerLines: [Int] = []

    init(logs: HistoryLogs, history: [HistoryTransaction]) {
        problems = logs.problems
        transactions = history.count
        let numbers = Set(history.map(\.transactionNumber))
        if numbers.count != history.count { problems.append("the full history holds a transaction twice") }
        for (name, lines) in logs.readers { checkReader(name, lines, all: numbers) }
        checkWriters(logs.writerLines, history)
    }

    mutating func add(_ problems: [String]) { self.problems += problems }

    var summary: String {
        "\(transactions) transactions, read in full by \(readerLines.count) readers (\(readerLines) log lines); "
            + "\(acknowledged) saves acknowledged, \(unknown.count) with a lost COMMIT (\(unknown.committed) "
            + "committed), \(inFlight.count) in flight at a kill (\(inFlight.committed) committed), \(failed) failed, "
            + "\(empty) with nothing to write"
    }

    private mutating func checkReader(_ name: String, _ lines: [HistoryLogs.ReaderLine], all: Set<Int64>) {
        readerLines.append(lines.count)
        var seen = Set<Int64>()
        for line in lines where !seen.insert(line.number).inserted {
            problems.append("\(name): transaction \(line.number) read twice")
        }
        let missing = all.subtracting(seen)
        if !missing.isEmpty {
            problems.append("\(name): \(missing.count) transactions missed: \(missing.sorted().prefix(10))")
        }
        let extra = seen.subtracting(all)
        if !extra.isEmpty {
            problems.append("\(name): \(extra.count) transactions not in history: \(extra.sorted().prefix(10))")
        }
        for (earlier, later) in zip(lines, lines.dropFirst()) where !(earlier.token < later.token) {
            problems.append("\(name): the token after \(later.number) does not follow the one after \(earlier.number)")
        }
        // Per object, in the reader's order: versions ascend from 1, and nothing follows a delete.
        var versions: [String: Int64] = [:]
        var deleted = Set<String>()
        for line in lines {
            for change in line.changes {
                let object = "\(change.entity) \(change.key)"
                if deleted.contains(object) { problems.append("\(name): \(change) in \(line.number) after its delete") }
                if change.kind == "delete" { deleted.insert(object) }
                if change.kind == "insert", change.version != 1 {
                    problems.append("\(name): \(change) in \(line.number): an insert not at version 1")
                }
                guard let version = change.version else { continue }
                if let last = versions[object], version <= last {
                    problems.append("\(name): \(change) in \(line.number) after version \(last)")
                }
                versions[object] = version
            }
        }
    }

    private mutating func checkWriters(_ lines: [HistoryLogs.WriterLine], _ history: [HistoryTransaction]) {
        var outcomes: [String: HistoryLogs.WriterLine] = [:]
        for line in lines { outcomes[line.name] = line }
        let committed = Dictionary(grouping: history) { $0.name ?? "" }
        for (name, transactions) in committed {
            let numbers = transactions.map(\.transactionNumber)
            if transactions.count > 1 {
                problems.append("save \(name) committed \(transactions.count) times: \(numbers)")
            }
            switch outcomes[name]?.outcome {
            case nil: problems.append("transaction \(numbers) named '\(name)': no writer began such a save")
            case "failed", "empty":
                problems.append(
                    "save \(name) (\(numbers)) is in history though it \(outcomes[name]?.outcome ?? ""): "
                        + "\(outcomes[name]?.error ?? "")")
            default: break
            }
        }
        for line in outcomes.values {
            let found = committed[line.name] ?? []
            switch line.outcome {
            case "ack":
                acknowledged += 1
                guard let transaction = found.first else {
                    problems.append("acknowledged save \(line.name) is not in history: \(line.changes)")
                    continue
                }
                let recorded = Set(transaction.changes.map(HistoryLogs.Change.init))
                let lacking = line.changes.filter { !recorded.contains($0) }
                if !lacking.isEmpty {
                    problems.append("acknowledged save \(line.name) lacks \(lacking) in history (\(recorded))")
                }
            case "unknown": unknown = (unknown.count + 1, unknown.committed + found.count)
            case "begin": inFlight = (inFlight.count + 1, inFlight.committed + found.count)
            case "empty": empty += 1
            default: failed += 1
            }
        }
    }
}
