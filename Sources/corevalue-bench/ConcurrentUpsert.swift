@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation

/// `concurrent_upsert`: 4 OS processes (this executable in `--worker` mode), each with its own store, upsert
/// ids 1...1000 for 20 rounds; every round starts on a 4-way barrier that this process holds.
///
/// Protocol over the workers' pipes: a worker prints `ready` once its structs are built and its store is
/// open, then for each round waits for a `go` line on stdin, saves, and prints `done` (or `error ...`).
struct ConcurrentUpsert {
    static let workers = 4
    static let rounds = 20
    static let ids = 1000

    let workload: Workload
    /// Whether the workers' stores record history (`op=concurrent_upsert.history`).
    var recordsHistory = false

    func run() throws {
        try workload.admin.execute("TRUNCATE \(workload.table("Employee")) CASCADE")
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var children: [WorkerProcess] = []
        for w in 0..<Self.workers {
            children.append(
                try WorkerProcess(
                    executable: executable,
                    arguments: ["--worker", workload.url, String(w)] + (recordsHistory ? ["history"] : [])))
        }
        defer { children.forEach { $0.finish() } }
        for child in children { try child.expect("ready") }

        let start = ContinuousClock.now
        var errors: [String] = []
        for _ in 0..<Self.rounds {
            for child in children { try child.send("go") }
            for child in children {
                let line = try child.readLine()
                if line != "done" { errors.append(line) }
            }
        }
        let elapsed = ContinuousClock.now - start
        let total = Self.workers * Self.rounds * Self.ids
        printLine(
            op: recordsHistory ? "concurrent_upsert.history" : "concurrent_upsert", rows: total, elapsed: elapsed,
            extra: "workers=\(Self.workers)")
        for child in children { try child.send("quit") }
        if !errors.isEmpty {
            workload.failures.append("concurrent_upsert: workers reported \(errors.count) errors: \(errors.prefix(3))")
        }
        if let problem = try workload.expectCount(Self.ids) {
            workload.failures.append("concurrent_upsert: \(problem)")
        }
    }

    /// The worker side: runs in its own process.
    static func worker(url: String, index: Int, recordsHistory: Bool) -> Int32 {
        do {
            let store = try PostgresStore(
                model: try BenchModel.make(),
                configuration: try .init(url: url, schema: BenchModel.schema).with {
                    $0.poolSize = 1
                    $0.recordsHistory = recordsHistory
                    $0.resolvesCommitOutcomes = BenchModel.resolvesCommits
                })
            let batches = (1...rounds).map { r in
                (1...ids).map { BenchData.employee($0, salaryDelta: Double(100 * r + index)) }
            }
            emit("ready")
            for batch in batches {
                guard readLine() == "go" else { return 1 }
                do {
                    try batch.saveAll(ManagedObjectContext(store: store))
                    emit("done")
                } catch {
                    emit("error \(error)".replacingOccurrences(of: "\n", with: " "))
                }
            }
            _ = readLine()
            return 0
        } catch {
            log("worker \(index): \(error)")
            emit("error \(error)".replacingOccurrences(of: "\n", with: " "))
            return 1
        }
    }
}

/// A child process with line-based pipes.
final class WorkerProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    init(executable: URL, arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    func readLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw BenchFailure(description: "worker exited early") }
            buffer.append(chunk)
        }
    }

    func expect(_ expected: String) throws {
        let line = try readLine()
        guard line == expected else { throw BenchFailure(description: "worker said '\(line)', expected '\(expected)'") }
    }

    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
