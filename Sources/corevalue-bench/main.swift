import Foundation

// corevalue-bench URL N: runs ../shared/bench/WORKLOAD.md through the public value-type API and prints one
// line per operation on stdout (logs go to stderr). Exits 0 only if every check passed.
// corevalue-bench --worker URL W: one concurrent_upsert worker (started by the benchmark itself).

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--worker", arguments.count == 3, let index = Int(arguments[2]) {
    exit(ConcurrentUpsert.worker(url: arguments[1], index: index))
}

guard arguments.count == 2, let n = Int(arguments[1]), n >= 1000, n % 7919 != 0 else {
    log("usage: corevalue-bench URL N   (N >= 1000, not a multiple of 7919)")
    exit(2)
}

do {
    let workload = try Workload(url: arguments[0], n: n)
    try workload.run()
    if workload.failures.isEmpty {
        exit(0)
    }
    for failure in workload.failures { log("check failed: \(failure)") }
    exit(1)
} catch {
    log("error: \(error)")
    exit(1)
}
