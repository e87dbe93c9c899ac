@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

/// History across failovers, on the servers of `make test-ha`: writer and reader processes
/// (`corevalue-worker history-writer` and `history-reader`, as in ``HistoryProcessTests``) run while the
/// primary fails over, the synchronous standby restarts, and the primary fails back. A reader that was down
/// during the first failover resumes on the new primary from the token in its log.
@Suite(.serialized, .enabled(if: HASetup.isAvailable, "needs the servers of scripts/ha-up.sh (make test-ha)"))
struct HistoryFailoverTests {
    /// A workload handed to the thread that keeps its writers going while the test thread waits for
    /// `ha-ctl`: `@unchecked`, since the test thread does not touch the workload until that thread has ended.
    final class Handover: @unchecked Sendable {
        let workload: HistoryWorkload
        init(_ workload: HistoryWorkload) { self.workload = workload }
    }

    @Test func readersSeeEveryCommittedTransactionOnceAcrossFailoversAndAStandbyRestart() throws {
        try TestDatabase.withSchema { url, schema in
            try Migrator(url: url, schema: schema).migrate(model: ExampleModel.model, recordsHistory: true)
            let workload = try HistoryWorkload(url: url, schema: schema, operations: 100)
            defer { workload.close() }
            for reader in 0..<2 { try workload.startReader(reader) }
            for writer in 0..<4 { try workload.startWriter(writer) }
            var steps: [String] = []
            try keepWriting(workload, until: 600)
            // Reader 1 is down across the first failover: it starts again on the new primary, from its token.
            workload.killReader(1)
            steps.append(try during(workload, "failover"))
            try workload.startReader(1)
            try keepWriting(workload, until: workload.acknowledgedCount() + 800)
            steps.append(try during(workload, "restart-standby"))
            try keepWriting(workload, until: workload.acknowledgedCount() + 500)
            // Back to the first node, with both readers running through it.
            steps.append(try during(workload, "failover"))
            try keepWriting(workload, until: workload.acknowledgedCount() + 800)
            try workload.finish()
            let report = try workload.check()
            print(
                "history failover (seed \(workload.seed)): \(report.summary); \(workload.killSummary); "
                    + steps.joined(separator: "; "))
            #expect(
                report.problems.isEmpty,
                "seed \(workload.seed), logs in \(workload.directory.path): \(report.problems.prefix(20))")
            #expect(report.acknowledged > 0)
            if report.problems.isEmpty, ProcessInfo.processInfo.environment["CV_HISTORY_KEEP_LOGS"] == nil {
                workload.removeLogs()
            }
        }
    }

    /// Keeps the writers going (a finished one starts again with a new seed), with a random kill every 0.4
    /// to 1.2 s, until the writers' logs acknowledge `count` saves (bounded: two minutes).
    private func keepWriting(_ workload: HistoryWorkload, until count: Int) throws {
        let deadline = ContinuousClock.now + .seconds(120)
        var nextKill = ContinuousClock.now + .seconds(1)
        while workload.acknowledgedCount() < count {
            guard ContinuousClock.now < deadline else {
                throw PostgresStoreError(.unexpectedResult, "fewer than \(count) saves acknowledged in 2 minutes")
            }
            try workload.restartFinishedWriters()
            if ContinuousClock.now > nextKill {
                try workload.killOne()
                nextKill = ContinuousClock.now + .milliseconds(Int(workload.random(in: 400...1_200)))
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    /// Runs `scripts/ha-ctl.sh command` while a thread keeps the writers going; returns the script's last
    /// line of output, for the log.
    private func during(_ workload: HistoryWorkload, _ command: String) throws -> String {
        let handover = Handover(workload)
        let stop = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // Restarting writers only: a failure to start one shows in the acknowledged count afterwards.
            while stop.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                try? handover.workload.restartFinishedWriters()
            }
            stopped.signal()
        }
        defer {
            stop.signal()
            stopped.wait()
        }
        let output = try HASetup.run(command)
        let last = output.split(separator: "\n").last.map(String.init) ?? ""
        return "\(command): \(last)"
    }
}
