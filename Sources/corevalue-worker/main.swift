import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation

// corevalue-worker URL SCHEMA INDEX ROUNDS COUNT
//
// One process of the multi-process tests: opens its own PostgresStore on SCHEMA (the example model), builds
// ROUNDS batches of COUNT unique Product structs (ids 1...COUNT, price = id + 100 * round + INDEX), prints
// `ready`, then for each round waits for a `go` line on stdin, saves the batch in one unit of work
// (`saveAll`) and prints `done`, or `error <description>` if the save failed. Exits after the last round.
// The test that starts it holds the barrier: every round starts when all workers have reported.

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line.replacingOccurrences(of: "\n", with: " ") + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 5, let index = Int(arguments[2]), let rounds = Int(arguments[3]),
    let count = Int32(arguments[4]), count > 0, rounds > 0
else {
    FileHandle.standardError.write(Data("usage: corevalue-worker URL SCHEMA INDEX ROUNDS COUNT\n".utf8))
    exit(2)
}

do {
    let store = try PostgresStore(url: arguments[0], model: ExampleModel.make(), schema: arguments[1], poolSize: 1)
    let batches = (1...rounds).map { round in
        (1...count).map { id in
            Product(id: id, name: "Product \(id)", price: Decimal(Int(id) + 100 * round + index))
        }
    }
    emit("ready")
    for batch in batches {
        guard readLine() == "go" else { exit(1) }
        do {
            try batch.saveAll(ManagedObjectContext(store: store))
            emit("done")
        } catch {
            emit("error \(error)")
        }
    }
    store.close()
} catch {
    emit("error \(error)")
    exit(1)
}
