import Foundation
@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

/// Makes a fresh, empty store for the example model (`ExampleModel.model`).
///
/// The behaviour suite (`Suite/`) takes one of these so that it runs unchanged against `MemoryStore` here and
/// against `PostgresStore` in `CoreValuePostgresTests` (a factory that creates a fresh schema per call).
typealias StoreFactory = @Sendable () throws -> any Store

/// One named behaviour check, run against the stores a factory makes, through the synchronous or the async API
/// (``APIMode``).
struct SuiteCase: Sendable, CustomTestStringConvertible {
    let name: String
    let run: @Sendable (StoreFactory, APIMode) async throws -> Void

    init(_ name: String, _ run: @escaping @Sendable (StoreFactory, APIMode) async throws -> Void) {
        self.name = name
        self.run = run
    }

    var testDescription: String { name }
}

/// Every store-generic behaviour case.
enum StoreSuite {
    static let all: [SuiteCase] =
        BoxingSuite.cases + PersistenceSuite.cases + FailedSaveSuite.cases + UniqueSuite.cases + QuerySuite.cases
        + ContextSuite.cases + RelationshipSuite.cases + RandomPredicateSuite.cases + StoreContractSuite.cases
        + IntegritySuite.cases + GraphIDSuite.cases + TypedQuerySuite.cases + WindowSuite.cases
}

/// A store that counts the calls made to another one: for asserting batching.
final class CountingStore: StoreRefinements, @unchecked Sendable {
    let base: any Store
    private let lock = NSLockish()
    private var counts: [String: Int] = [:]
    private var applied: [ChangeSet] = []
    private var fetched: [(request: FetchRequest, rows: Int)] = []

    init(_ base: any Store) { self.base = base }

    var model: ManagedObjectModel { base.model }

    /// How many times each call was made: "fetch", "fetchIDs", "fetchValues", "apply".
    func count(_ call: String) -> Int { lock.with { counts[call] ?? 0 } }
    /// Forgets the counts.
    func reset() { lock.with { counts.removeAll() } }

    private func record(_ call: String) { lock.with { counts[call, default: 0] += 1 } }

    func fetch(_ request: FetchRequest) throws -> [RowSnapshot] {
        record("fetch")
        let rows = try base.fetch(request)
        lock.with { fetched.append((request, rows.count)) }
        return rows
    }

    /// Every request passed to `fetch(_:)` with the number of rows it returned, in order.
    var fetches: [(request: FetchRequest, rows: Int)] { lock.with { fetched } }

    func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] {
        record("fetchIDs")
        return try base.fetch(ids: ids)
    }

    func fetch(entityName: String, key: String, values: [AttributeValue]) throws -> [RowSnapshot] {
        record("fetchValues")
        return try base.refinements.fetch(entityName: entityName, key: key, values: values)
    }

    /// Every change set passed to `apply`, in order.
    var changeSets: [ChangeSet] { lock.with { applied } }

    func apply(_ changes: ChangeSet) throws -> SaveResult {
        record("apply")
        lock.with { applied.append(changes) }
        return try base.apply(changes)
    }
}

/// A tiny lock for test helpers.
final class NSLockish: @unchecked Sendable {
    private let lock = Foundation.NSLock()
    func with<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
