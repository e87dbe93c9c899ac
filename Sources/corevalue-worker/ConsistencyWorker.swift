@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation

// corevalue-worker consistency-setup URL SCHEMA KEYS
// corevalue-worker consistency-run URL SCHEMA PROCESS SEED SECONDS KEYS LOG
// corevalue-worker consistency-final URL SCHEMA KEYS LOG
//
// The consistency workload of scripts/test-faults.sh, through the public struct API only, as a user writes
// it: one fresh context per operation, `query` to read, `save` to write. `setup` migrates the example model
// into SCHEMA and stores KEYS companies with no employees, products with price 0 and employees aged 0 (tag
// `init`). `run` (process number PROCESS) runs random operations for SECONDS seconds, or until LOG.stop
// exists, logging each to LOG (ConsistencyLog.swift). `final` reads every key once, after the writers
// stopped, so that the checker knows where each key ended. The operations:
// - `append`: reads company k, appends one or two new employees to its ordered `employees`, saves it (a
//   persistent struct: version-checked, so a concurrent append makes it fail with a conflict);
// - `read`: reads every company in one `query`, each one's member names in order;
// - `uwrite`: saves product u (a unique struct: an upsert, last writer wins) with a number as its price and
//   this operation's tag as its name; `uread` reads every product;
// - `incr`: reads employee r, saves it with age + 1 and this operation's tag as department and job (a
//   read-modify-write, version-checked); `pread` reads every such employee.

/// Opens the workload's store, retrying for up to a minute: a process started during a failover or a
/// partition finds no primary for a while.
func openConsistencyStore(url: String, schema: String) throws -> RecordingStore {
    var configuration = try PostgresStore.Configuration(url: url, schema: schema)
    configuration.poolSize = 1
    configuration.failoverBudget = .seconds(30)
    // Behind pgbouncer before 1.21 no statement may stay prepared between transactions (CV_TEST_STATEMENT_CACHE=0,
    // as the tests of `make test-ha` are told).
    if let size = ProcessInfo.processInfo.environment["CV_TEST_STATEMENT_CACHE"].flatMap(Int.init) {
        configuration.preparedStatementCacheSize = size
    }
    let deadline = ContinuousClock.now + .seconds(60)
    while true {
        do {
            return RecordingStore(try PostgresStore(model: ExampleModel.model, configuration: configuration))
        } catch  where ContinuousClock.now < deadline {
            FileHandle.standardError.write(Data("opening the store: \(error)\n".utf8))
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

/// `consistency-setup URL SCHEMA KEYS`.
func runConsistencySetup(_ arguments: [String]) -> Int32 {
    guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else {
        FileHandle.standardError.write(Data("usage: corevalue-worker consistency-setup URL SCHEMA KEYS\n".utf8))
        return 2
    }
    do {
        _ = try Migrator(url: arguments[0], schema: arguments[1]).migrate(model: ExampleModel.model)
        let store = try openConsistencyStore(url: arguments[0], schema: arguments[1])
        defer { store.base.close() }
        let keys = ConsistencyKeys(count: count)
        let context = ManagedObjectContext(store: store)
        for name in keys.lists {
            var company = Company(name: name, employees: [])
            try company.save(context)
        }
        for key in keys.uniques {
            try Product(id: try ConsistencyKeys.productID(key), name: "init", price: 0).save(context)
        }
        for name in keys.persistents {
            var employee = Employee(name: name, age: 0, position: nil, department: "init", job: "init")
            try employee.save(context)
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("consistency-setup: \(error)\n".utf8))
        return 1
    }
}

/// `consistency-run URL SCHEMA PROCESS SEED SECONDS KEYS LOG`.
func runConsistencyWorkload(_ arguments: [String]) -> Int32 {
    guard arguments.count == 7, let process = Int(arguments[2]), let seed = UInt64(arguments[3]),
        let seconds = Double(arguments[4]), let count = Int(arguments[5]), count > 0
    else {
        FileHandle.standardError.write(
            Data("usage: corevalue-worker consistency-run URL SCHEMA PROCESS SEED SECONDS KEYS LOG\n".utf8))
        return 2
    }
    let path = arguments[6]
    do {
        let log = try AppendLog(path: path)
        let store = try openConsistencyStore(url: arguments[0], schema: arguments[1])
        defer { store.base.close() }
        var workload = ConsistencyWorkload(
            process: process, keys: ConsistencyKeys(count: count), store: store, log: log,
            generator: SeededGenerator(state: seed))
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end, !FileManager.default.fileExists(atPath: path + ".stop") {
            try workload.step()
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("consistency-run: \(error)\n".utf8))
        return 1
    }
}

/// `consistency-final URL SCHEMA KEYS LOG`: one read of each kind, each tried until it succeeds (a minute at
/// most), as process `final`.
func runConsistencyFinal(_ arguments: [String]) -> Int32 {
    guard arguments.count == 4, let count = Int(arguments[2]), count > 0 else {
        FileHandle.standardError.write(Data("usage: corevalue-worker consistency-final URL SCHEMA KEYS LOG\n".utf8))
        return 2
    }
    do {
        let log = try AppendLog(path: arguments[3])
        let store = try openConsistencyStore(url: arguments[0], schema: arguments[1])
        defer { store.base.close() }
        var workload = ConsistencyWorkload(
            process: -1, keys: ConsistencyKeys(count: count), store: store, log: log,
            generator: SeededGenerator(state: 0))
        for kind in ["read", "uread", "pread"] {
            let deadline = ContinuousClock.now + .seconds(60)
            while try workload.run(kind) != "ok" {
                guard ContinuousClock.now < deadline else { throw WorkerFailure("the final \(kind) kept failing") }
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("consistency-final: \(error)\n".utf8))
        return 1
    }
}
