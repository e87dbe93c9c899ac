@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Synchronization
import LibPQ
import Testing

/// History on PostgreSQL, commit order: transactions numbered in one order and committed in another, saves
/// blocked on row locks, IDs reused after a failover. The shared suite (`HistorySuite`) runs on both stores.
@Suite struct HistoryTests {
    /// Runs `body` with a store recording history on a fresh schema migrated from `model` with the history tables.
    static func withHistoryStore(
        _ function: String = #function, model: ManagedObjectModel = ExampleModel.model,
        channel: String? = nil, _ body: (PostgresStore, _ url: String, _ schema: String) throws -> Void
    ) throws {
        try TestDatabase.withSchema(function) { url, schema in
            try Migrator(url: url, schema: schema).migrate(model: model, recordsHistory: true)
            let store = try PostgresStore(
                model: model,
                configuration: try .init(url: url, schema: schema).with {
                    $0.recordsHistory = true
                    // Through pgbouncer (make test-ha) the cache is off, as for every store of the tests.
                    if let size = TestDatabase.statementCacheSize { $0.preparedStatementCacheSize = size }
                    $0.notificationChannel = channel
                })
            defer { store.close() }
            try body(store, url, schema)
        }
    }

    /// The anomaly a sequence number taken inside each transaction allows: A takes number 10, B takes 11, B
    /// commits, a reader reads up to 11, then A commits. A reader of ours sees B, then A, each once.
    @Test func aTransactionThatCommitsAfterALaterNumberedOneIsStillRead() throws {
        try Self.withHistoryStore { store, url, schema in
            let start = try store.currentHistoryToken()
            // A: a save held open after recording (its number taken), as a slow COMMIT would be.
            let held = try Connection(url)
            defer { held.close() }
            try held.execute("BEGIN")
            let table = SQLIdentifier(SchemaMapping.historyTable, schema: schema).quoted
            let numberA = try held.query(
                "INSERT INTO \(table) (entities, properties, kinds, entity_runs, key_ranges, version_runs, property_runs) "
                    + "VALUES ('{Employee}', '{\"\"}', 'i', '{0,1}', '{1,1}', '{1,1}', '{0,1}') "
                    + "RETURNING \"_pk\"", []
            ).decode(Int64.self, row: 0, column: 0)
            // B: a save through the store, numbered after A, committed first.
            var bob = Employee(name: "Bob", age: 40, position: nil, department: "Sales", job: "Clerk")
            try bob.save(ManagedObjectContext(store: store))
            let first = try store.history(after: start, limit: 10)
            #expect(first.count == 1)
            #expect(first.first.map { $0.transactionNumber > numberA } == true)
            guard let afterB = first.last?.token else { return }
            #expect(try store.history(after: afterB, limit: 10).isEmpty)

            try held.execute("COMMIT")
            let second = try store.history(after: afterB, limit: 10)
            #expect(second.map(\.transactionNumber) == [numberA])
            // From the start, both come in one batch: they touched no common row, so either order is a commit
            // order, and they come by number.
            let all = try store.history(after: start, limit: 10).map(\.transactionNumber)
            #expect(all == [numberA] + first.map(\.transactionNumber))
            // Read in pages of one, the same.
            var token = start
            var paged: [Int64] = []
            while let next = try store.history(after: token, limit: 1).first {
                paged.append(next.transactionNumber)
                token = next.token
            }
            #expect(paged == all)
        }
    }

    /// A save that waits for another's row lock is invisible while it waits and is read after what committed
    /// meanwhile; a rolled-back transaction never appears.
    @Test func aSaveBlockedOnARowLockIsReadAfterWhatCommittedMeanwhile() throws {
        try Self.withHistoryStore { store, url, schema in
            var eve = Employee(name: "Eve", age: 30, position: nil, department: "Sales", job: "Clerk")
            try eve.save(ManagedObjectContext(store: store))
            guard let eveKey = eve.objectID?.primaryKey else { return }
            let start = try store.currentHistoryToken()
            let locker = try Connection(url)
            defer { locker.close() }
            try locker.execute("BEGIN")
            try locker.execute(
                "SELECT 1 FROM \(SQLIdentifier("Employee", schema: schema).quoted) WHERE \"_pk\" = \(eveKey) FOR UPDATE"
            )
            // A rolled-back history row: never read.
            let aborted = try Connection(url)
            defer { aborted.close() }
            try aborted.execute(
                "BEGIN; INSERT INTO \(SQLIdentifier(SchemaMapping.historyTable, schema: schema).quoted) "
                    + "(entities, properties, kinds, entity_runs, key_ranges, version_runs, property_runs) "
                    + "VALUES ('{Employee}', '{\"\"}', 'd', '{0,1}', '{999,1}', '{NULL,1}', '{0,1}')"
            )

            var changedEve = eve
            changedEve.age = 31
            let waiting = changedEve
            let saved = DispatchSemaphore(value: 0)
            let failure = Mutex<(any Error)?>(nil)
            Thread {
                do {
                    let context = ManagedObjectContext(store: store)
                    let ann = Employee(name: "Ann", age: 22, position: nil, department: "Ops", job: "Clerk")
                    try ann.toObject(context)
                    try waiting.toObject(context)
                    try context.save()
                } catch {
                    failure.withLock { $0 = error }
                }
                saved.signal()
            }.start()
            try Self.waitForLockWait(url)
            var bob = Employee(name: "Bob", age: 40, position: nil, department: "Sales", job: "Clerk")
            try bob.save(ManagedObjectContext(store: store))
            let whileWaiting = try store.history(after: start, limit: 10)
            #expect(whileWaiting.map { $0.changes.map(\.objectID) } == [[bob.objectID].compactMap { $0 }])
            try aborted.execute("ROLLBACK")
            try locker.execute("COMMIT")
            saved.wait()
            #expect(failure.withLock { $0 } == nil)
            guard let afterBob = whileWaiting.last?.token else { return }
            let rest = try store.history(after: afterBob, limit: 10)
            #expect(rest.count == 1)
            #expect(rest.first?.changes.map(\.kind) == [.insert, .update])
            #expect(try store.history(after: start, limit: 10).count == 2)
        }
    }

    /// Polls until a backend waits for a lock (bounded: 10 s).
    static func waitForLockWait(_ url: String) throws {
        let connection = try Connection(url)
        defer { connection.close() }
        for _ in 0..<1_000 {
            let waiting = try connection.query(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", []
            ).decode(Int64.self, row: 0, column: 0)
            if waiting > 0 { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        Issue.record("no backend waited for the lock")
    }

    /// After a failover, a transaction ID that ended unrecorded on the old primary (a rollback whose abort
    /// never reached the standby) may be taken again on the new one. A token's snapshot says that ID ended;
    /// the new transaction's higher number says it was not read: it is read, and pruning up to the token
    /// keeps it. Simulated by recording a row under an ID the token's snapshot shows.
    @Test func aTransactionUnderAReusedIDIsStillRead() throws {
        try Self.withHistoryStore { store, url, schema in
            var eve = Employee(name: "Eve", age: 30, position: nil, department: "Sales", job: "Clerk")
            try eve.save(ManagedObjectContext(store: store))
            let token = try store.currentHistoryToken()
            #expect(token.baseNumber >= 1)
            let reused = token.base.xmin - 1
            #expect(token.base.shows(reused))
            let table = SQLIdentifier(SchemaMapping.historyTable, schema: schema).quoted
            try TestDatabase.execute(
                url,
                "INSERT INTO \(table) (xid, entities, properties, kinds, entity_runs, key_ranges, version_runs, property_runs) "
                    + "VALUES ('\(reused)'::xid8, '{Employee}', '{\"\",age}', 'u', '{0,1}', '{1,1}', '{2,1}', '{1,1}')")
            #expect(try store.deleteHistory(before: token) == 1)  // Eve's insert, not the reused one
            let read = try store.history(after: token, limit: 10)
            #expect(read.map { $0.changes.map(\.kind) } == [[.update]])
            guard let last = read.last else { return }
            #expect(try store.history(after: last.token, limit: 10).isEmpty)
            #expect(try store.history(after: nil, limit: 10).count == 1)
        }
    }
}
