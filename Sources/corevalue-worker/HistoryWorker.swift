@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Synchronization

// corevalue-worker history-writer URL SCHEMA SEED OPS LOG
// corevalue-worker history-reader URL SCHEMA LOG
//
// The processes of the history tests (HistoryProcessTests, HistoryFailoverTests), which kill them at random.
// Both append JSON lines to LOG, each in one write() followed by fsync(), so that a kill leaves whole lines
// and at most a torn last one.
//
// The writer saves OPS times at random (SEED) on the example model, one save per fresh context, named
// `<LOG's name>-s<SEED>-<n>` (the transaction name history records): it logs `begin` before each save, then
// `ack` with the changes history must hold (entity, key, kind, version, from the store's own answer),
// `unknown` (the COMMIT's reply was lost), `failed` (nothing committed) or `empty` (nothing to write).
//
// The reader reads history 200 transactions at a time from the token of its LOG's last whole line (from the
// start when there is none), logs each transaction with the token after it, and exits once LOG.stop exists
// and a read begun after it appeared found nothing. Errors are retried from the same token.

/// One change as the logs hold it.
struct LoggedChange: Codable, Hashable {
    var entity: String
    var key: Int64
    var kind: String
    var version: Int64?

    init(entity: String, key: Int64, kind: String, version: Int64? = nil) {
        self.entity = entity
        self.key = key
        self.kind = kind
        self.version = version
    }

    init(_ change: HistoryChange) {
        self.init(
            entity: change.entityName, key: change.objectID.primaryKey ?? -1, kind: change.kind.rawValue,
            version: change.version)
    }
}

/// A line of a writer's log.
struct WriterLine: Codable {
    var outcome: String
    var name: String
    var changes: [LoggedChange] = []
    var error: String?
}

/// A line of a reader's log: one transaction, with the token that stands after it.
struct ReaderLine: Codable {
    var number: Int64
    var name: String?
    var changes: [LoggedChange]
    var token: HistoryToken
}

struct WorkerFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A file that JSON lines are appended to, each in one `write` and made durable before the next step: what
/// a log says happened, happened before the process could be killed.
final class AppendLog {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw WorkerFailure("cannot open \(path): errno \(errno)") }
    }

    func append(_ line: some Encodable) throws {
        var data = try JSONEncoder().encode(line)
        data.append(UInt8(ascii: "\n"))
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == data.count else { throw WorkerFailure("short write to a log: \(written), errno \(errno)") }
        guard fsync(descriptor) == 0 else { throw WorkerFailure("fsync of a log failed: errno \(errno)") }
    }

    /// The last whole line of the log at `path` (`nil` for none); a torn line after it is cut off first, so
    /// that the lines appended next stay whole.
    static func lastLine(at path: String) throws -> Data? {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return nil }
        let newline = UInt8(ascii: "\n")
        let end = data.lastIndex(of: newline)
        let length = end.map { $0 - data.startIndex + 1 } ?? 0
        if length != data.count, truncate(path, off_t(length)) != 0 {
            throw WorkerFailure("cannot cut the torn line off \(path): errno \(errno)")
        }
        guard let end else { return nil }
        let start = data[..<end].lastIndex(of: newline).map { $0 + 1 } ?? data.startIndex
        return Data(data[start..<end])
    }
}

/// SplitMix64: the same operations for the same seed on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A `PostgresStore` that keeps what its last save applied and how it ended: the writer logs the versions
/// the store itself answered (a read after the save could already see another writer's), and tells a lost
/// `COMMIT` from a save that failed whatever error the struct API wraps it in.
final class RecordingStore: StoreRefinements {
    enum Outcome: Sendable {
        case saved(ChangeSet, SaveResult)
        case unknown(ChangeSet, String)
        case failed(String)
    }

    let base: PostgresStore
    private let last = Mutex<Outcome?>(nil)

    init(_ base: PostgresStore) { self.base = base }

    /// The outcome of the last save since the last call, and forgets it.
    func takeOutcome() -> Outcome? { last.withLock { $0.take() } }

    func apply(_ changes: ChangeSet) throws -> SaveResult {
        do {
            let result = try base.apply(changes)
            last.withLock { $0 = .saved(changes, result) }
            return result
        } catch let error as PostgresStoreError where error.code == .commitOutcomeUnknown {
            last.withLock { $0 = .unknown(changes, "\(error)") }
            throw error
        } catch {
            last.withLock { $0 = .failed("\(error)") }
            throw error
        }
    }

    var model: ManagedObjectModel { base.model }
    var caseMappingVersion: Unicode.Version { base.caseMappingVersion }
    func fetch(_ request: FetchRequest) throws -> [RowSnapshot] { try base.fetch(request) }
    func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] { try base.fetch(ids: ids) }
    func count(_ request: FetchRequest) throws -> Int { try base.count(request) }
    func fetch(_ request: FetchRequest, batchSize: Int, _ body: ([RowSnapshot]) throws -> Bool) throws {
        try base.fetch(request, batchSize: batchSize, body)
    }
    func fetch(_ request: FetchRequest, inParts body: (FetchedPart) throws -> Void) throws {
        try base.fetch(request, inParts: body)
    }
    func fetch(related relationship: String, of entityName: String, owners: [Int64]) throws -> [RowSnapshot]? {
        try base.fetch(related: relationship, of: entityName, owners: owners)
    }
    func fetch(entityName: String, key: String, values: [AttributeValue]) throws -> [RowSnapshot] {
        try base.fetch(entityName: entityName, key: key, values: values)
    }
    func apply(upserts: StreamedUpserts?, streaming produce: (_ send: (ChangeSet) throws -> Void) throws -> Void)
        throws -> SaveResult
    {
        // The writer's saves are single structs, never streamed; were one streamed, it would log as `empty`.
        try base.apply(upserts: upserts, streaming: produce)
    }
    func runBlocking(_ work: @escaping @Sendable () -> Void) { base.runBlocking(work) }
    func aggregate(_ request: AggregateRequest) throws -> [AggregateRow] { try base.aggregate(request) }
    func batchUpdate(_ request: BatchUpdateRequest) throws -> BatchResult { try base.batchUpdate(request) }
    func batchDelete(_ request: BatchDeleteRequest) throws -> BatchResult { try base.batchDelete(request) }
}

/// Opens a store recording history, retrying for up to a minute: a process restarted during a failover
/// finds no primary for a while.
func openHistoryStore(url: String, schema: String, author: String) throws -> PostgresStore {
    var configuration = try PostgresStore.Configuration(url: url, schema: schema)
    configuration.recordsHistory = true
    configuration.historyAuthor = author
    configuration.poolSize = 1
    configuration.failoverBudget = .seconds(30)
    let deadline = ContinuousClock.now + .seconds(60)
    while true {
        do {
            return try PostgresStore(model: ExampleModel.model, configuration: configuration)
        } catch  where ContinuousClock.now < deadline {
            FileHandle.standardError.write(Data("opening the store: \(error)\n".utf8))
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

/// `history-writer URL SCHEMA SEED OPS LOG`.
func runHistoryWriter(_ arguments: [String]) -> Int32 {
    guard arguments.count == 5, let seed = UInt64(arguments[2]), let operations = Int(arguments[3]) else {
        FileHandle.standardError.write(Data("usage: corevalue-worker history-writer URL SCHEMA SEED OPS LOG\n".utf8))
        return 2
    }
    let me = URL(fileURLWithPath: arguments[4]).deletingPathExtension().lastPathComponent
    do {
        let log = try AppendLog(path: arguments[4])
        let store = RecordingStore(try openHistoryStore(url: arguments[0], schema: arguments[1], author: me))
        defer { store.base.close() }
        var writer = HistoryWriter(me: me, generator: SeededGenerator(state: seed))
        for operation in 0..<operations {
            let name = "\(me)-s\(seed)-\(operation)"
            try log.append(WriterLine(outcome: "begin", name: name))
            let context = ManagedObjectContext(store: store)
            context.transactionName = name
            var thrown: String?
            do { try writer.step(context) } catch { thrown = "\(error)" }
            try log.append(line(for: store.takeOutcome(), name: name, thrown: thrown))
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("history-writer: \(error)\n".utf8))
        return 1
    }
}

/// What the log says of one save, from how the store's `apply` ended (a save that committed is
/// acknowledged even should something after it throw).
private func line(for outcome: RecordingStore.Outcome?, name: String, thrown: String?) -> WriterLine {
    switch outcome {
    case .saved(let changes, let result):
        let changes = HistoryChange.changes(of: changes, result: result).map(LoggedChange.init)
        return WriterLine(outcome: changes.isEmpty ? "empty" : "ack", name: name, changes: changes, error: thrown)
    case .unknown(let changes, let error):
        // The stored objects it wrote; what it inserted has no key yet.
        let ids =
            changes.updates.map(\.id).compactMap { id in id.primaryKey.map { (id.entityName, $0, "update") } }
            + changes.deletes.map(\.id).compactMap { id in id.primaryKey.map { (id.entityName, $0, "delete") } }
        return WriterLine(
            outcome: "unknown", name: name, changes: ids.map { LoggedChange(entity: $0, key: $1, kind: $2) },
            error: error)
    case .failed(let error): return WriterLine(outcome: "failed", name: name, error: error)
    case nil: return WriterLine(outcome: thrown == nil ? "empty" : "failed", name: name, error: thrown)
    }
}

/// The random saves of one writer. Employees of department `me` are its own (a restarted writer takes
/// them over); products and companies are shared with every writer, so saves collide.
struct HistoryWriter {
    let me: String
    var generator: SeededGenerator

    mutating func step(_ context: ManagedObjectContext) throws {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<3: try insertEmployee(context)
        case 3..<6: try updateEmployee(context)
        case 6: try deleteEmployee(context)
        case 7, 8: try upsertProduct(context)
        default: try changeCompany(context)
        }
    }

    private func mine(_ context: ManagedObjectContext) throws -> [Employee] {
        try Employee.query(context, predicate: .key("department") == me)
    }

    private mutating func insertEmployee(_ context: ManagedObjectContext) throws {
        var employee = Employee(
            name: context.transactionName ?? me, age: Int16.random(in: 18...65, using: &generator), position: nil,
            department: me, job: "clerk")
        try employee.save(context)
    }

    private mutating func updateEmployee(_ context: ManagedObjectContext) throws {
        guard var employee = try mine(context).randomElement(using: &generator) else {
            return try insertEmployee(context)
        }
        employee.age =
            employee.age >= 65 ? 18 : employee.age + Int16.random(in: 1...(65 - employee.age), using: &generator)
        try employee.save(context)
    }

    private mutating func deleteEmployee(_ context: ManagedObjectContext) throws {
        guard let id = try mine(context).randomElement(using: &generator)?.objectID else { return }
        // Through the context, not the struct's `delete`, whose error wraps the store's.
        try context.delete(context.existingObject(with: id))
        try context.save()
    }

    private mutating func upsertProduct(_ context: ManagedObjectContext) throws {
        let product = Product(
            id: Int32.random(in: 1...12, using: &generator), name: me,
            price: Decimal(Int.random(in: 1...1_000, using: &generator)))
        try product.save(context)
    }

    /// A new company now and then (and while there are fewer than four), else one company's list made of a
    /// few of its members and a few of this writer's employees, shuffled: members move between companies.
    private mutating func changeCompany(_ context: ManagedObjectContext) throws {
        let companies: [Company] = try Company.query(context, predicate: nil)
        let own = try mine(context).shuffled(using: &generator)
        let newcomers = Array(own.prefix(Int.random(in: 0...3, using: &generator)))
        guard companies.count >= 4, Int.random(in: 0..<10, using: &generator) > 0,
            var company = companies.randomElement(using: &generator)
        else {
            var company = Company(name: "\(me) company", employees: newcomers)
            return try company.save(context)
        }
        let kept = company.employees.filter { _ in Bool.random(using: &generator) }.prefix(3)
        let joining = newcomers.filter { newcomer in !kept.contains { $0.objectID == newcomer.objectID } }
        company.employees = (kept + joining).shuffled(using: &generator)
        try company.save(context)
    }
}

/// `history-reader URL SCHEMA LOG`.
func runHistoryReader(_ arguments: [String]) -> Int32 {
    guard arguments.count == 3 else {
        FileHandle.standardError.write(Data("usage: corevalue-worker history-reader URL SCHEMA LOG\n".utf8))
        return 2
    }
    let path = arguments[2]
    let stop = path + ".stop"
    do {
        var token = try AppendLog.lastLine(at: path).map { try JSONDecoder().decode(ReaderLine.self, from: $0).token }
        let log = try AppendLog(path: path)
        let store = try openHistoryStore(url: arguments[0], schema: arguments[1], author: "reader")
        defer { store.close() }
        while true {
            // Asked before the read: an empty read begun after the stop file appeared ends the reader.
            let stopping = FileManager.default.fileExists(atPath: stop)
            let page: [HistoryTransaction]
            do {
                page = try store.history(after: token, limit: 200)
            } catch {
                // A lost connection or a failover in progress: the same token again.
                FileHandle.standardError.write(Data("history-reader: \(error)\n".utf8))
                Thread.sleep(forTimeInterval: 0.1)
                continue
            }
            for transaction in page {
                try log.append(
                    ReaderLine(
                        number: transaction.transactionNumber, name: transaction.name,
                        changes: transaction.changes.map(LoggedChange.init), token: transaction.token))
                token = transaction.token
            }
            if page.isEmpty {
                if stopping { return 0 }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    } catch {
        FileHandle.standardError.write(Data("history-reader: \(error)\n".utf8))
        return 1
    }
}
