import CoreValue
import Foundation

// corevalue-bench URL N: runs ../shared/bench/WORKLOAD.md through the public value-type API and prints one
// line per operation on stdout (logs go to stderr). Exits 0 only if every check passed.
// corevalue-bench --worker URL W: one concurrent_upsert worker (started by the benchmark itself).
// corevalue-bench --box N: boxing and an in-memory save only, for profilers.

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--worker", arguments.count == 3, let index = Int(arguments[2]) {
    exit(ConcurrentUpsert.worker(url: arguments[1], index: index))
}

// corevalue-bench --box N: boxes N employees into a MemoryStore context and saves them, with no server: a
// client-only harness for profilers (perf, callgrind). Prints the boxing and saving seconds.
if arguments.first == "--box", arguments.count == 2, let n = Int(arguments[1]), n > 0 {
    do {
        let employees = (1...n).map { BenchData.employee($0) }
        let context = ManagedObjectContext(store: MemoryStore(model: try BenchModel.make()))
        let start = ContinuousClock.now
        try employees.toObjects(context)
        let boxed = ContinuousClock.now
        try context.save()
        let saved = ContinuousClock.now
        emit("op=box n=\(n) box_s=\(seconds(boxed - start)) save_s=\(seconds(saved - boxed))")
        exit(0)
    } catch {
        log("error: \(error)")
        exit(1)
    }
}

guard arguments.count == 2, let n = Int(arguments[1]), n >= 1000, n % 7919 != 0 else {
    log("usage: corevalue-bench URL N   (N >= 1000, not a multiple of 7919)")
    exit(2)
}

do {
    let workload = try Workload(url: arguments[0], n: n)
    try workload.run()
    // The process's peak resident set (getrusage reports kilobytes on Linux), as WORKLOAD.md's last line.
    var usage = rusage()
    #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let peak = Int(usage.ru_maxrss) * 1024
    #else
        getrusage(RUSAGE_SELF, &usage)
        let peak = Int(usage.ru_maxrss)  // bytes on Darwin
    #endif
    emit("op=peak_rss n=\(n) bytes=\(peak)")
    if workload.failures.isEmpty {
        exit(0)
    }
    for failure in workload.failures { log("check failed: \(failure)") }
    exit(1)
} catch {
    log("error: \(error)")
    exit(1)
}
