@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// Several OS processes (`corevalue-worker`), each with its own store, saving the same unique structs at once.
@Suite struct ConcurrentProcessTests {
    /// A worker process with line-based pipes (see Sources/corevalue-worker/main.swift for the protocol).
    final class Worker {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        var buffer = Data()

        init(_ arguments: [String]) throws {
            process.executableURL = try CommandLineTests.binary(named: "corevalue-worker")
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
                if chunk.isEmpty { return "exited" }
                buffer.append(chunk)
            }
        }

        func finish() -> Int32 {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// Starts `workers` workers, runs `rounds` rounds behind a barrier, and returns every line other than `done`.
    static func runWorkers(
        _ workers: Int, rounds: Int, count: Int, url: String, schema: String, extra: [String] = []
    ) throws -> (failures: [String], statuses: [Int32]) {
        let processes = try (0..<workers).map { w in
            try Worker([url, schema, String(w), String(rounds), String(count)] + extra)
        }
        var failures: [String] = []
        for worker in processes {
            let line = try worker.readLine()
            if line != "ready" { failures.append(line) }
        }
        for _ in 0..<rounds where failures.isEmpty {
            for worker in processes { try worker.send("go") }
            for worker in processes {
                let line = try worker.readLine()
                if line != "done" { failures.append(line) }
            }
        }
        return (failures, processes.map { $0.finish() })
    }

    /// Eight processes save the same 1,000 unique structs, each batch in an order of its own: row locks are
    /// taken in one order (no deadlock fails a save), and every row is one worker's whole struct (its name
    /// `w<k>` and its price `id + 100 * round + k` come from the same worker k), never a mix of two.
    @Test func eightProcessesInShuffledOrdersNeitherDeadlockNorTearRows() throws {
        let workers = 8
        let rounds = 6
        let count = 1000
        try TestDatabase.withExampleStore { store, url, schema in
            let (failures, statuses) = try Self.runWorkers(
                workers, rounds: rounds, count: count, url: url, schema: schema, extra: ["shuffled"])
            #expect(failures.isEmpty, "\(failures.count) worker errors, the first: \(failures.first ?? "")")
            #expect(statuses == Array(repeating: 0, count: workers))
            let products: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(products.count == count)
            let torn = products.filter { product in
                let writer = (NSDecimalNumber(decimal: product.price).intValue - Int(product.id)) % 100
                return product.name != "w\(writer)"
            }
            #expect(torn.isEmpty, "\(torn.count) rows mix two workers' columns, e.g. \(torn.prefix(3))")
            #expect(products.allSatisfy { (NSDecimalNumber(decimal: $0.price).intValue - Int($0.id)) / 100 == rounds })
        }
    }

    @Test func fourProcessesSavingTheSameThousandUniqueStructsTwentyTimesEndWithAThousandRows() throws {
        let workers = 4
        let rounds = 20
        let count = 1000
        try TestDatabase.withExampleStore { store, url, schema in
            let processes = try (0..<workers).map { w in
                try Worker([url, schema, String(w), String(rounds), String(count)])
            }
            var lines: [String] = []
            for worker in processes { lines.append(try worker.readLine()) }
            #expect(lines == Array(repeating: "ready", count: workers))
            var failures: [String] = []
            for _ in 0..<rounds {
                for worker in processes { try worker.send("go") }
                for worker in processes {
                    let line = try worker.readLine()
                    if line != "done" { failures.append(line) }
                }
            }
            let statuses = processes.map { $0.finish() }
            let failureCount = failures.count
            #expect(failureCount == 0, "worker errors, the first: \(failures.first ?? "")")
            #expect(statuses == Array(repeating: 0, count: workers))

            let products: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(products.count == count)
            #expect(Set(products.map(\.id)) == Set(1...Int32(count)))
            // Every row holds a value that some worker wrote in the last round: id + 100 * rounds + w.
            let lastRound = products.filter { product in
                (0..<workers).contains { w in product.price == Decimal(Int(product.id) + 100 * rounds + w) }
            }
            #expect(lastRound.count == count)
        }
    }
}
