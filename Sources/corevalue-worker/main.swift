@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation

// corevalue-worker URL SCHEMA INDEX ROUNDS COUNT [shuffled]
// corevalue-worker ephemeral
// corevalue-worker merge URL SCHEMA POLICY NAME
//
// One process of the multi-process tests: opens its own PostgresStore on SCHEMA (the example model), builds
// ROUNDS batches of COUNT unique Product structs (ids 1...COUNT, price = id + 100 * round + INDEX), prints
// `ready`, then for each round waits for a `go` line on stdin, saves the batch in one unit of work
// (`saveAll`) and prints `done`, or `error <description>` if the save failed. Exits after the last round.
// The test that starts it holds the barrier: every round starts when all workers have reported.
//
// With `shuffled`, each batch is in a random order of its own and every product is
// named `w<INDEX>`: a row then says which worker wrote its name, and its price which worker wrote the price,
// so a row that mixes two workers' columns is seen.

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line.replacingOccurrences(of: "\n", with: " ") + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())

// corevalue-worker history-writer / history-reader: see HistoryWorker.swift.
if arguments.first == "history-writer" { exit(runHistoryWriter(Array(arguments.dropFirst()))) }
if arguments.first == "history-reader" { exit(runHistoryReader(Array(arguments.dropFirst()))) }
// corevalue-worker consistency-setup / consistency-run / consistency-final: see ConsistencyWorker.swift.
if arguments.first == "consistency-setup" { exit(runConsistencySetup(Array(arguments.dropFirst()))) }
if arguments.first == "consistency-run" { exit(runConsistencyWorkload(Array(arguments.dropFirst()))) }
if arguments.first == "consistency-final" { exit(runConsistencyFinal(Array(arguments.dropFirst()))) }

// corevalue-worker ephemeral: the first thing a fresh process does is box a struct graph without a context
// (`toObject(nil)`) and read it back; prints `ephemeral <company> <employees> <objectID>` or `error ...`.
if arguments == ["ephemeral"] {
    do {
        var company = Company(
            name: "Acme",
            employees: [
                Employee(name: "Ann", age: 30, position: nil, department: "D", job: "J"),
                Employee(name: "Bob", age: 40, position: "Lead", department: "D", job: "J"),
            ])
        let object = try company.mutatingToObject(nil)
        let read = try Company.fromObject(object)
        emit(
            "ephemeral \(read.name) \(read.employees.map(\.name).joined(separator: ",")) "
                + "\(company.objectID == nil && read.objectID == nil ? "nil" : "set")")
        exit(0)
    } catch {
        emit("error \(error)")
        exit(1)
    }
}

// corevalue-worker merge URL SCHEMA POLICY NAME: reads the employee named NAME into a context with the merge
// policy POLICY (a `MergePolicy` raw value) and prints `read`; on a `go` line it sets `department` to
// "Support" and `job` to "buyer", saves, and prints `saved <age> <department> <job>` (the struct after the
// save) or `error <description>`.
if arguments.first == "merge", arguments.count == 5, let policy = MergePolicy(rawValue: arguments[3]) {
    do {
        let store = try PostgresStore(
            model: ExampleModel.make(),
            configuration: try .init(url: arguments[1], schema: arguments[2]).with { $0.poolSize = 1 })
        defer { store.close() }
        let context = ManagedObjectContext(store: store)
        context.mergePolicy = policy
        let found: [Employee] = try Employee.query(context, predicate: .key("name") == arguments[4])
        guard var employee = found.first else {
            emit("error no employee named \(arguments[4])")
            exit(1)
        }
        emit("read")
        guard readLine() == "go" else { exit(1) }
        employee.department = "Support"
        employee.job = "buyer"
        try employee.save(context)
        emit("saved \(employee.age) \(employee.department) \(employee.job)")
        exit(0)
    } catch {
        emit("error \(error)")
        exit(1)
    }
}

guard arguments.count == 5 || (arguments.count == 6 && arguments[5] == "shuffled"), let index = Int(arguments[2]),
    let rounds = Int(arguments[3]), let count = Int32(arguments[4]), count > 0, rounds > 0
else {
    FileHandle.standardError.write(Data("usage: corevalue-worker URL SCHEMA INDEX ROUNDS COUNT [shuffled]\n".utf8))
    exit(2)
}
let shuffled = arguments.count == 6

do {
    let store = try PostgresStore(
        model: ExampleModel.make(),
        configuration: try .init(url: arguments[0], schema: arguments[1]).with { $0.poolSize = 1 })
    let batches = (1...rounds).map { round in
        let products = (1...count).map { id in
            Product(
                id: id, name: shuffled ? "w\(index)" : "Product \(id)", price: Decimal(Int(id) + 100 * round + index))
        }
        return shuffled ? products.shuffled() : products
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
