import CoreValue
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
