@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation

/// The operations of one workload process (see ConsistencyWorker.swift), each logged before it starts and
/// when it ends.
struct ConsistencyWorkload {
    let process: Int
    let keys: ConsistencyKeys
    let store: RecordingStore
    let log: AppendLog
    var generator: SeededGenerator
    private var operation = 0

    init(process: Int, keys: ConsistencyKeys, store: RecordingStore, log: AppendLog, generator: SeededGenerator) {
        self.process = process
        self.keys = keys
        self.store = store
        self.log = log
        self.generator = generator
    }

    private var name: String { process < 0 ? "final" : "p\(process)" }

    /// One operation, chosen at random: writes a little more often than reads, so that lists grow.
    mutating func step() throws {
        let kinds = [
            "append", "append", "append", "read", "read", "uwrite", "uwrite", "uread", "incr", "incr", "pread",
        ]
        _ = try run(kinds[Int.random(in: 0..<kinds.count, using: &generator)])
    }

    /// Runs and logs one operation of `kind`; returns how it ended (`ok`, `fail` or `info`).
    mutating func run(_ kind: String) throws -> String {
        operation += 1
        // Unique across processes: a value names the operation that wrote it.
        let tag = "\(name)-\(operation)"
        var line = OperationLine(type: "invoke", process: name, op: operation, time: 0, kind: kind, keys: [])
        if ["append", "uwrite", "incr"].contains(kind) { line.tag = tag }
        switch kind {
        case "append":
            line.keys = [pick(keys.lists)]
            line.append = (1...Int.random(in: 1...2, using: &generator)).map { "\(tag).\($0)" }
        case "uwrite":
            line.keys = [pick(keys.uniques)]
            line.write = RegisterState(n: process * 1_000_000 + operation, a: tag, b: tag)
        case "incr": line.keys = [pick(keys.persistents)]
        case "read": line.keys = keys.lists
        case "uread": line.keys = keys.uniques
        default: line.keys = keys.persistents
        }
        line.time = monotonicNanoseconds()
        try log.append(line)
        _ = store.takeOutcome()
        let retries = store.base.statistics.retries
        let context = ManagedObjectContext(store: store)
        do {
            try perform(&line, tag: tag, in: context)
            line.type = "ok"
        } catch {
            line.error = "\(error)"
            line.type = "fail"
        }
        // What the caller was told, except that an error the struct API wrapped around a lost COMMIT that could
        // not be looked up means unknown, not failed. A save that committed but threw stays `fail`: the checker
        // then reports its values as read from a failed write (G1a), since the caller was told it failed.
        if line.type == "fail", case .unknown = store.takeOutcome() { line.type = "info" }
        line.retries = store.base.statistics.retries - retries
        line.time = monotonicNanoseconds()
        try log.append(line)
        return line.type
    }

    private mutating func pick(_ keys: [String]) -> String { keys[Int.random(in: 0..<keys.count, using: &generator)] }

    /// The operation itself; what it read goes into `line` as soon as it was read (an `incr` or `append` that
    /// then fails to save still says what it saw).
    private func perform(_ line: inout OperationLine, tag: String, in context: ManagedObjectContext) throws {
        switch line.kind {
        case "append":
            var company: Company = try one(
                Company.query(context, predicate: .key("name") == line.keys[0]), line.keys[0])
            line.lists = [line.keys[0]: company.employees.map(\.name)]
            company.employees += (line.append ?? []).map {
                Employee(name: $0, age: 0, position: nil, department: "member", job: "member")
            }
            try company.save(context)
        case "read":
            let companies: [Company] = try Company.query(context, predicate: .key("name").in(line.keys))
            line.lists = Dictionary(companies.map { ($0.name, $0.employees.map(\.name)) }) { first, _ in first }
        case "uwrite":
            guard let write = line.write else { throw WorkerFailure("a uwrite without a value") }
            let id = try ConsistencyKeys.productID(line.keys[0])
            try Product(id: id, name: write.a, price: Decimal(write.n)).save(context)
        case "uread":
            let products: [Product] = try Product.query(
                context, predicate: .key("id").in(try line.keys.map(ConsistencyKeys.productID)))
            // A price that is no integer becomes -1, which no write wrote: the checker reports the row as torn.
            line.registers = Dictionary(
                products.map { ("u\($0.id)", RegisterState(n: Int("\($0.price)") ?? -1, a: $0.name, b: $0.name)) }
            ) { first, _ in first }
        case "incr":
            var employee: Employee = try one(
                Employee.query(context, predicate: .key("name") == line.keys[0]), line.keys[0])
            line.registers = [line.keys[0]: state(of: employee)]
            employee.age += 1
            employee.department = tag
            employee.job = tag
            line.write = state(of: employee)
            try employee.save(context)
        default:
            let employees: [Employee] = try Employee.query(context, predicate: .key("name").in(line.keys))
            line.registers = Dictionary(employees.map { ($0.name, state(of: $0)) }) { first, _ in first }
        }
    }

    private func state(of employee: Employee) -> RegisterState {
        RegisterState(n: Int(employee.age), a: employee.department, b: employee.job)
    }

    private func one<T>(_ found: [T], _ key: String) throws -> T {
        guard found.count == 1, let first = found.first else {
            throw WorkerFailure("\(found.count) rows for key \(key), not one")
        }
        return first
    }
}
