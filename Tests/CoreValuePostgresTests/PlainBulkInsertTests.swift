@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// A bulk `saveAll` of new unique structs whose identifiers no stored row can share is written with plain
/// inserts (no `ON CONFLICT`), and falls back to upserts when another writer takes an identifier meanwhile.
@Suite struct PlainBulkInsertTests {
    /// The SQL of every statement a store sent, in order.
    typealias SQLLog = LockedList<String>

    static func products(_ ids: ClosedRange<Int32>, name: String) -> [Product] {
        ids.map { Product(id: $0, name: "\(name) \($0)", price: Decimal(Int($0))) }
    }

    /// With ``PostgresStore/Configuration/writesThroughCopy`` new rows go in one binary COPY (after the probe
    /// and the statement that reserves their keys); without it, in plain inserts, one per part.
    @Test(arguments: [true, false])
    func newRowsAreInsertedPlainlyAndRowsThatMayBeStoredAreUpserted(throughCopy: Bool) throws {
        let log = SQLLog()
        try TestDatabase.withExampleStore(configure: { configuration in
            configuration.writesThroughCopy = throughCopy
            configuration.onEvent = { event in
                if event.kind == .statement, let sql = event.sql { log.append(sql) }
            }
        }) { store, _, _ in
            func save(_ products: [Product]) throws -> (inserts: [String], statistics: StoreStatistics) {
                let start = log.all.count
                let before = store.statistics
                try products.saveAll(ManagedObjectContext(store: store))
                return (log.productWrites(from: start), store.statistics.since(before))
            }
            func isNewRows(_ writes: [String]) -> Bool {
                throughCopy
                    ? writes.count == 1 && writes[0].hasPrefix("COPY")
                    : writes.count == 3 && writes.allSatisfy { $0.hasPrefix("INSERT") && !$0.contains("ON CONFLICT") }
            }
            // An empty table: one probe, then one COPY (its keys reserved first) or three parts of plain inserts.
            let fresh = try save(Self.products(1...4_500, name: "a"))
            #expect(isNewRows(fresh.inserts), "\(fresh.inserts)")
            // And the commit identifier, with the probe.
            #expect(fresh.statistics.statements == (throughCopy ? 4 : 5))
            #expect(fresh.statistics.retries == 0)
            // Identifiers above every stored one: still new.
            let above = try save(Self.products(4_501...9_000, name: "b"))
            #expect(isNewRows(above.inserts), "\(above.inserts)")
            // Starting below a stored identifier: upserts, which update the stored rows.
            let over = try save(Self.products(4_000...8_000, name: "c"))
            #expect(over.inserts.count == 3 && over.inserts.allSatisfy { $0.contains("ON CONFLICT") })
            #expect(over.statistics.retries == 0)

            let stored: [Product] = try Product.query(
                ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "id")])
            #expect(stored.map(\.id) == Array(1...9_000))
            #expect(stored[0].name == "a 1" && stored[3_998].name == "a 3999")
            #expect(stored[3_999].name == "c 4000" && stored[7_999].name == "c 8000" && stored[8_000].name == "b 8001")
            let rows = try store.fetch(
                FetchRequest(entityName: "Product", sortDescriptors: [CVSortDescriptor(key: "id")]))
            #expect(
                rows.map(\.version) == Array(repeating: 1, count: 3_999) + Array(repeating: 2, count: 4_001)
                    + Array(repeating: 1, count: 1_000))
        }
    }

    /// The least identifier is checked as any value is before the probe sends it: a NUL character is the
    /// store's typed error, and nothing is written. A hint naming no unique attribute is refused too.
    @Test func theProbeRefusesWhatAPartWouldRefuse() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let hostile = "a\u{0}'; DROP TABLE \"Author\"; --"
            let hint = StreamedUpserts(entityName: "Author", key: "id", lowest: .string(hostile), count: 1)
            #expect {
                _ = try store.apply(upserts: hint) { send in
                    try send(ChangeSet(inserts: [UpsertTests.author(hostile, "x")]))
                }
            } throws: { error in
                (error as? PostgresStoreError)?.code == .invalidValue
            }
            let wrongKey = StreamedUpserts(entityName: "Author", key: "name", lowest: .string("a"), count: 1)
            #expect(throws: CVManagedStructError.self) {
                _ = try store.apply(upserts: wrongKey) { _ in }
            }
            #expect(try store.count(FetchRequest(entityName: "Author")) == 0)
            // A quote is only a value: the probe binds it, and the row is inserted as it is.
            let quoted = "o'brien \"x\""
            _ = try store.apply(
                upserts: StreamedUpserts(entityName: "Author", key: "id", lowest: .string(quoted), count: 1)
            ) {
                send in try send(ChangeSet(inserts: [UpsertTests.author(quoted, "q")]))
            }
            let rows = try store.fetch(FetchRequest(entityName: "Author"))
            #expect(rows.map { $0.attributes["id"] } == [.string(quoted)])
        }
    }

    /// Another writer inserts an identifier of the stream, uncommitted while the store probes (so the probe
    /// cannot see it), and commits once the store's plain insert waits on it: the insert fails with a unique
    /// violation, and the store writes the whole stream again with upserts. Nothing is lost or duplicated,
    /// the stream's values win, and the caller sees no error.
    @Test(arguments: [true, false])
    func anIdentifierTakenDuringThePlainInsertIsUpsertedInstead(throughCopy: Bool) throws {
        let log = SQLLog()
        let retries = ErrorBox()
        try TestDatabase.withExampleStore(configure: { configuration in
            configuration.writesThroughCopy = throughCopy
            configuration.onEvent = { event in
                if event.kind == .statement, let sql = event.sql { log.append(sql) }
                if event.kind == .retry, let error = event.error { retries.append(error) }
            }
        }) { store, url, schema in
            let table = SQLIdentifier("Product", schema: schema).quoted
            let other = try Connection(url)
            defer { other.close() }
            try other.execute("BEGIN")
            try other.execute("INSERT INTO \(table) (id, name, price) VALUES (3000, 'other', 1)")

            let failure = ErrorBox()
            let done = DispatchSemaphore(value: 0)
            let products = Self.products(1...4_500, name: "stream")
            Thread.detachNewThread {
                do { try products.saveAll(ManagedObjectContext(store: store)) } catch { failure.append(error) }
                done.signal()
            }
            // Waits until the store's insert waits on the other writer's row, then lets the other commit.
            let admin = try Connection(url)
            defer { admin.close() }
            let deadline = ContinuousClock.now + .seconds(60)
            var waiting: Int64 = 0
            while waiting == 0, ContinuousClock.now < deadline {
                waiting = try admin.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        + "AND (query LIKE 'INSERT INTO %' OR query LIKE 'COPY %') AND query LIKE $1",
                    [try PostgresValue("%" + schema + "%Product%")]
                ).decode(Int64.self, row: 0, column: 0)
                if waiting == 0 { Thread.sleep(forTimeInterval: 0.005) }
            }
            #expect(waiting == 1)
            try other.execute("COMMIT")
            done.wait()

            #expect(failure.all.isEmpty, "\(failure.all)")
            let violations = retries.all.compactMap { $0 as? DatabaseError }
            #expect(violations.count == 1 && violations.first?.sqlState == .uniqueViolation)
            // The first attempt's COPY or plain inserts, then the second attempt's upserts (no second probe).
            let inserts = log.productWrites(from: 0)
            #expect(inserts.filter { !$0.contains("ON CONFLICT") }.count >= 1)
            #expect(inserts.contains { $0.hasPrefix("COPY") } == throughCopy)
            #expect(inserts.filter { $0.contains("ON CONFLICT") }.count == 3)
            #expect(log.all.filter { $0.hasPrefix("SELECT 1 FROM") }.count == 1)

            let rows = try store.fetch(
                FetchRequest(entityName: "Product", sortDescriptors: [CVSortDescriptor(key: "id")]))
            #expect(rows.count == 4_500)
            #expect(rows.map { $0.attributes["id"] } == (1...4_500).map { .int32($0) })
            let taken = try #require(rows.first { $0.attributes["id"] == .int32(3000) })
            #expect(taken.attributes["name"] == .string("stream 3000"))
            // Inserted by the other writer (version 1), updated by the stream.
            #expect(taken.version == 2)
            #expect(rows.filter { $0.version != 1 }.count == 1)
        }
    }

    /// The store's backend is terminated while it copies (a trigger holds row 3,000 for a moment): the
    /// transaction is run again, the context hands the same parts over again from the objects it boxed, and
    /// each struct is saved once, at the first version.
    @Test func aConnectionKilledMidCopyIsRetriedWithTheSamePartsAndSavesEachStructOnce() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { store, url, schema in
            let table = SQLIdentifier("Product", schema: schema).quoted
            let function = SQLIdentifier("cv_pause", schema: schema).quoted
            try TestDatabase.execute(
                url,
                """
                CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS
                $$ BEGIN PERFORM pg_sleep(0.3); RETURN NEW; END $$;
                CREATE TRIGGER cv_pause BEFORE INSERT ON \(table) FOR EACH ROW WHEN (NEW.id = 3000)
                EXECUTE FUNCTION \(function)();
                """)
            let killer = StreamedSaveTests.KillOnce()
            killer.url = url
            killer.schema = schema
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                // Once the COPY sleeps on row 3,000 the first time.
                let deadline = ContinuousClock.now + .seconds(60)
                while killer.killed == 0, ContinuousClock.now < deadline {
                    if (try? TestDatabase.isSleeping(url, inStatementOn: schema)) == true {
                        killer.kill()
                    } else {
                        Thread.sleep(forTimeInterval: 0.005)
                    }
                }
                done.signal()
            }
            let context = ManagedObjectContext(store: store)
            let before = store.statistics
            try Self.products(1...4_500, name: "p").saveAll(context)
            done.wait()
            #expect(killer.killed == 1)
            #expect(store.statistics.since(before).retries == 1)
            let registered = context.registeredObjects(entityName: "Product")
            #expect(registered.count == 4_500)
            #expect(
                Set(registered.map(\.objectID)).count == 4_500 && registered.allSatisfy { !$0.objectID.isTemporary })
            let rows = try store.fetch(FetchRequest(entityName: "Product"))
            #expect(rows.count == 4_500 && rows.allSatisfy { $0.version == 1 })
            // Each object has its own row's key (the reserved keys of the second attempt).
            let stored = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0.attributes["id"]) })
            #expect(registered.allSatisfy { stored[$0.objectID] == (try? $0.value(forKey: "id")) })
        }
    }

    /// A key column without its identity sequence (changed behind the store's back) is a typed error naming
    /// it, and nothing is written.
    @Test func aKeyColumnWithoutASequenceIsATypedError() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            let table = SQLIdentifier("Product", schema: schema).quoted
            try TestDatabase.execute(url, #"ALTER TABLE \#(table) ALTER COLUMN "_pk" DROP IDENTITY"#)
            #expect {
                try Self.products(1...4_500, name: "p").saveAll(ManagedObjectContext(store: store))
            } throws: { error in
                (error as? PostgresStoreError)?.code == .schemaMismatch && "\(error)".contains("writesThroughCopy")
            }
            #expect(try store.count(FetchRequest(entityName: "Product")) == 0)
        }
    }
}

extension LockedList<String> {
    /// The inserts and copies of products sent since `start`.
    func productWrites(from start: Int) -> [String] {
        all.dropFirst(start).filter {
            ($0.hasPrefix("INSERT INTO") || $0.hasPrefix("COPY")) && $0.contains(#""Product""#)
        }
    }
}
