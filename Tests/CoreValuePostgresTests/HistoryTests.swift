@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Synchronization
import LibPQ
import Testing

/// History on PostgreSQL beyond the shared suite: commit order against transaction start order, the schema
/// path, and tombstones of every type.
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

    /// The history tables come from the migration path and are checked when a store opens.
    @Test func theHistoryTablesAreMigratedAndChecked() throws {
        try TestDatabase.withSchema { url, schema in
            let migrator = try Migrator(url: url, schema: schema)
            try migrator.migrate(model: ExampleModel.model)
            let configuration = try PostgresStore.Configuration(url: url, schema: schema).with {
                $0.recordsHistory = true
            }
            #expect {
                _ = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            } throws: { error in
                (error as? PostgresStoreError).map {
                    $0.code == .schemaMismatch && $0.mismatches.contains { $0.contains(SchemaMapping.historyTable) }
                } ?? false
            }
            let diff = try migrator.diff(model: ExampleModel.model, recordsHistory: true)
            #expect(diff.statements.count == 3)  // two tables (the state one with its row) and the xid index
            #expect(diff.destructive.isEmpty)
            try migrator.migrate(model: ExampleModel.model, recordsHistory: true)
            let again = try migrator.diff(model: ExampleModel.model, recordsHistory: true)
            #expect(again.statements.isEmpty, "\(again.statements)")
            // A schema that has the tables serves stores without history too, and a diff without history
            // leaves them alone.
            #expect(try migrator.diff(model: ExampleModel.model).destructive.isEmpty)
            let plain = try PostgresStore(model: ExampleModel.model, configuration: try .init(url: url, schema: schema))
            defer { plain.close() }
            var eve = Employee(name: "Eve", age: 30, position: nil, department: "Sales", job: "Clerk")
            try eve.save(ManagedObjectContext(store: plain))
            let recording = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { recording.close() }
            #expect(try recording.history(after: nil, limit: 10).isEmpty)
            #expect { _ = try plain.history(after: nil, limit: 1) } throws: {
                ($0 as? CVManagedStructError)?.code == .historyUnavailable
            }
        }
    }

    /// A delete's tombstone keeps every attribute marked preserved, of every type, exactly as `MemoryStore`'s.
    @Test func tombstonesKeepEveryTypeExactly() throws {
        let entities = ExampleModel.entities.map { entity -> Entity in
            guard entity.name == "Car" else { return entity }
            var car = entity
            car.attributes = car.attributes.map {
                var attribute = $0
                attribute.preservesValueAfterDeletion = true
                return attribute
            }
            return car
        }
        let model = try ManagedObjectModel(entities)
        try Self.withHistoryStore(model: model) { store, _, _ in
            let memory = MemoryStore(model: model, recordsHistory: true)
            var stones: [[String: AttributeValue]] = []
            for target in [store as any HistoryStore, memory] {
                let context = ManagedObjectContext(store: target)
                var car = Car(
                    name: "Beetle", kind: .hatchback, doors: 3, mileage: 123_456_789_012, seats: 4, weight: 812.5,
                    power: 37.25, registered: true, price: Decimal(string: "12345.67") ?? 0,
                    builtAt: Date(timeIntervalSince1970: 1_700_000_000.25), vin: UUID(), photo: Data([0, 1, 255]),
                    nickname: nil)
                try car.save(context)
                let start = try target.currentHistoryToken()
                _ = try car.delete(context)
                try context.save()
                let history = try target.history(after: start, limit: 10)
                stones.append(history.first?.changes.first?.tombstone ?? [:])
            }
            #expect(stones[0].count == 13)
            #expect(stones[0]["photo"] == .data(Data([0, 1, 255])))
            #expect(stones[0]["nickname"] == .null)
            #expect(stones[0].filter { $0.key != "vin" } == stones[1].filter { $0.key != "vin" })
        }
    }

    /// A history listener hands out every save once, woken by notifications; after its notification
    /// connection is killed it still hands out what committed meanwhile, with no gap to report.
    @Test func aHistoryListenerMissesNothingAcrossALostConnection() throws {
        let channel = "cv_history_" + UUID().uuidString.prefix(8).lowercased()
        try Self.withHistoryStore(channel: channel) { store, url, _ in
            let listener = try store.makeHistoryListener(
                after: try store.currentHistoryToken(), pollInterval: .seconds(30))
            defer { listener.close() }
            #expect(try listener.next(timeout: .milliseconds(50)).isEmpty)
            var names: [String] = []
            func save(_ name: String) throws {
                var employee = Employee(name: name, age: 30, position: nil, department: "Ops", job: "Clerk")
                try employee.save(ManagedObjectContext(store: store))
            }
            try save("A")
            // Woken by the notification long before the 30 s poll.
            names += try listener.next(timeout: .seconds(10)).flatMap(\.changes).map(\.objectID.description)
            #expect(names.count == 1)
            try TestDatabase.execute(
                url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE strpos(query, '\(channel)') > 0 "
                    + "AND pid <> pg_backend_pid()")
            try save("B")
            try save("C")
            var read: [HistoryTransaction] = []
            for _ in 0..<20 where read.count < 2 { read += try listener.next(timeout: .seconds(1)) }
            #expect(read.count == 2)
            #expect(try listener.next(timeout: .milliseconds(50)).isEmpty)
            #expect(listener.token == read.last?.token)
        }
    }

    /// The async form: a sequence of transactions as they commit, ending when its task is cancelled; without
    /// a channel the listener polls.
    @Test func historyTransactionsAsAnAsyncSequence() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try await TestSchema.withEmpty { schema in
            try await Migrator(url: schema.url, schema: schema.name).migrate(
                model: ExampleModel.model, recordsHistory: true)
            let store = try PostgresStore(
                model: ExampleModel.model,
                configuration: try .init(url: schema.url, schema: schema.name).with { $0.recordsHistory = true })
            defer { store.close() }
            let listener = try store.makeHistoryListener(after: nil, pollInterval: .milliseconds(20))
            let reader = Task {
                var numbers: [Int64] = []
                for try await transaction in listener.transactions() {
                    numbers.append(transaction.transactionNumber)
                    if numbers.count == 5 { break }
                }
                return numbers
            }
            for index in 0..<5 {
                var employee = Employee(name: "E\(index)", age: 30, position: nil, department: "Ops", job: "Clerk")
                try await employee.save(ManagedObjectContext(store: store))
            }
            let numbers = try await reader.value
            #expect(numbers.count == 5 && numbers == numbers.sorted())
            // A cancelled task ends its sequence.
            let quiet = try store.makeHistoryListener(after: await store.currentHistoryToken())
            let idle = Task {
                var count = 0
                for try await _ in quiet.transactions() {
                    count += 1
                }
                return count
            }
            idle.cancel()
            #expect(try await idle.value == 0)
        }
    }

    /// What history costs a save, counted by the driver against the same store without history: one
    /// statement and one round trip more (the record, which carries the `COMMIT`, after the save's
    /// statements, whose results it lists); a delete whose tombstone keeps values, one more of each for
    /// reading them first.
    @Test func historyCostsASaveOneStatementAndOneRoundTrip() throws {
        try Self.withHistoryStore { store, url, schema in
            let plain = try PostgresStore(
                model: ExampleModel.model, configuration: try .init(url: url, schema: schema).with { $0.poolSize = 1 })
            defer { plain.close() }
            for target in [plain, store] {
                try Product(id: 1, name: "one", price: 1).save(ManagedObjectContext(store: target))
            }
            let costs = try [plain, store].map { target in
                let before = target.statistics
                try Product(id: 1, name: "uno", price: 11).save(ManagedObjectContext(store: target))
                return target.statistics.since(before)
            }
            #expect(costs[1].statements == costs[0].statements + 1)
            #expect(costs[1].roundTrips == costs[0].roundTrips + 1)
            // Deletes, once to prepare their statements on the connection, then counted.
            let deletes = try [plain, store].map { target in
                var deleting = StoreStatistics()
                for id in Int32(2)...3 {
                    try Product(id: id, name: "p", price: 2).save(ManagedObjectContext(store: target))
                    let context = ManagedObjectContext(store: target)
                    let found: [Product] = try Product.query(context, predicate: .key("id") == id)
                    let before = target.statistics
                    try #require(found.first).delete(context)
                    try context.save()
                    deleting = target.statistics.since(before)
                }
                return deleting
            }
            #expect(deletes[1].statements == deletes[0].statements + 2)
            #expect(deletes[1].roundTrips == deletes[0].roundTrips + 2, "\(deletes)")
        }
    }

    /// Pruning while a reader reads: pruned up to the reader's own token, the reader sees every save once;
    /// pruned by date faster than it reads, it is told `historyExpired`, never handed a page with a gap
    /// inside it, and reads on from a new token.
    @Test func pruningUnderALiveReaderNeverLeavesAGap() throws {
        try Self.withHistoryStore { store, _, _ in
            let writers = 2
            let perWriter = 150
            let done = DispatchGroup()
            let failure = Mutex<(any Error)?>(nil)
            for writer in 0..<writers {
                done.enter()
                Thread {
                    defer { done.leave() }
                    do {
                        for index in 0..<perWriter {
                            var employee = Employee(
                                name: "w\(writer)-\(index)", age: 30, position: nil, department: "Ops", job: "Clerk")
                            try employee.save(ManagedObjectContext(store: store))
                        }
                    } catch {
                        failure.withLock { $0 = error }
                    }
                }.start()
            }
            // The reader publishes its token after handling each page; the pruner never goes past it.
            let published = Mutex<HistoryToken?>(nil)
            let writing = Mutex(true)
            let prunerDone = DispatchSemaphore(value: 0)
            let pruner = Thread {
                while writing.withLock({ $0 }) {
                    if let token = published.withLock({ $0 }) { _ = try? store.deleteHistory(before: token) }
                    Thread.sleep(forTimeInterval: 0.005)
                }
                prunerDone.signal()
            }
            pruner.start()
            var seen: [ManagedObjectID] = []
            var token: HistoryToken?
            var finished = false
            while !finished {
                finished = done.wait(timeout: .now()) == .success
                while true {
                    let page = try store.history(after: token, limit: 25)
                    seen += page.flatMap(\.changes).map(\.objectID)
                    token = page.last?.token ?? token
                    published.withLock { $0 = token }
                    if page.count < 25 { break }
                }
            }
            writing.withLock { $0 = false }
            prunerDone.wait()
            #expect(failure.withLock { $0 } == nil)
            #expect(seen.count == writers * perWriter)
            #expect(Set(seen).count == seen.count)

            // By date, faster than the reader: expired, then on from a new token.
            let stale = try store.currentHistoryToken()
            var employee = Employee(name: "late", age: 30, position: nil, department: "Ops", job: "Clerk")
            try employee.save(ManagedObjectContext(store: store))
            #expect(try store.deleteHistory(olderThan: Date().addingTimeInterval(60)) >= 1)
            #expect {
                _ = try store.history(after: stale, limit: 10)
            } throws: { ($0 as? CVManagedStructError)?.code == .historyExpired }
            let fresh = try store.currentHistoryToken()
            employee.age = 31
            try employee.save(ManagedObjectContext(store: store))
            #expect(try store.history(after: fresh, limit: 10).map { $0.changes.map(\.kind) } == [[.update]])
        }
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

    /// Least privilege: with the GRANTs `SchemaPrinter(recordsHistory: true).grants(to:)` prints, an
    /// application role records, reads and prunes history; a read-only role reads it.
    @Test func historyWorksWithTheGrantsAlone() throws {
        try TestDatabase.withSchema { url, schema in
            try Migrator(url: url, schema: schema).migrate(model: ExampleModel.model, recordsHistory: true)
            let admin = try Connection(url)
            let suffix = UInt32.random(in: 0...UInt32.max)
            let roles = ["cv_hist_app_\(suffix)", "cv_hist_ro_\(suffix)"]
            defer {
                for role in roles {
                    try? admin.execute("DROP OWNED BY \(SQLIdentifier.quote(role))")
                    try? admin.execute("DROP ROLE IF EXISTS \(SQLIdentifier.quote(role))")
                }
                admin.close()
            }
            let printer = SchemaPrinter(model: ExampleModel.model, schema: schema, recordsHistory: true)
            for (role, readOnly) in zip(roles, [false, true]) {
                try admin.execute("CREATE ROLE \(SQLIdentifier.quote(role)) LOGIN")
                try admin.execute(printer.grants(to: role, readOnly: readOnly))
            }
            func open(_ role: String, readOnly: Bool) throws -> PostgresStore {
                try PostgresStore(
                    model: ExampleModel.model,
                    configuration: .init(
                        connection: try ConnectionConfiguration(try LeastPrivilegeTests.url(url, user: role)),
                        schema: schema
                    ).with {
                        $0.recordsHistory = true
                        $0.readOnly = readOnly
                    })
            }
            let app = try open(roles[0], readOnly: false)
            defer { app.close() }
            var eve = Employee(name: "Eve", age: 30, position: nil, department: "Sales", job: "Clerk")
            try eve.save(ManagedObjectContext(store: app))
            let context = ManagedObjectContext(store: app)
            try Product(id: 1, name: "one", price: 1).save(context)
            try Product(id: 1, name: "one", price: 1).delete(context)
            try context.save()
            let read = try app.history(after: nil, limit: 10)
            #expect(read.count == 3)
            let reader = try open(roles[1], readOnly: true)
            defer { reader.close() }
            #expect(try reader.history(after: nil, limit: 10).map(\.transactionNumber) == read.map(\.transactionNumber))
            #expect(try reader.currentHistoryToken().storeID == read.first?.token.storeID)
            #expect { _ = try reader.deleteHistory(before: try reader.currentHistoryToken()) } throws: {
                ($0 as? PostgresStoreError)?.code == .readOnlyStore
            }
            #expect(try app.deleteHistory(before: try #require(read.last).token) == 3)
        }
    }
}
