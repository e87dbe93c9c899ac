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
    final class SQLLog: @unchecked Sendable {
        private let lock = NSLock()
        private var texts: [String] = []
        func append(_ sql: String) {
            lock.lock()
            texts.append(sql)
            lock.unlock()
        }
        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return texts
        }
        /// The inserts of products sent since `start`.
        func productInserts(from start: Int) -> [String] {
            all.dropFirst(start).filter { $0.hasPrefix("INSERT INTO") && $0.contains(#""Product""#) }
        }
    }

    static func products(_ ids: ClosedRange<Int32>, name: String) -> [Product] {
        ids.map { Product(id: $0, name: "\(name) \($0)", price: Decimal(Int($0))) }
    }

    @Test func newRowsAreInsertedPlainlyAndRowsThatMayBeStoredAreUpserted() throws {
        let log = SQLLog()
        try TestDatabase.withExampleStore(configure: { configuration in
            configuration.onEvent = { event in
                if event.kind == .statement, let sql = event.sql { log.append(sql) }
            }
        }) { store, _, _ in
            func save(_ products: [Product]) throws -> (inserts: [String], statistics: StoreStatistics) {
                let start = log.all.count
                let before = store.statistics
                try products.saveAll(ManagedObjectContext(store: store))
                return (log.productInserts(from: start), store.statistics.since(before))
            }
            // An empty table: one probe, then three parts of plain inserts.
            let fresh = try save(Self.products(1...4_500, name: "a"))
            #expect(fresh.inserts.count == 3)
            #expect(fresh.inserts.allSatisfy { !$0.contains("ON CONFLICT") })
            #expect(fresh.statistics.statements == 4)
            #expect(fresh.statistics.retries == 0)
            // Identifiers above every stored one: still new, still plain.
            let above = try save(Self.products(4_501...9_000, name: "b"))
            #expect(above.inserts.count == 3 && above.inserts.allSatisfy { !$0.contains("ON CONFLICT") })
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
            let hint = StreamedUpserts(entityName: "Author", key: "id", lowest: .string(hostile))
            #expect {
                _ = try store.apply(upserts: hint) { send in
                    try send(ChangeSet(inserts: [UpsertTests.author(hostile, "x")]))
                }
            } throws: { error in
                (error as? PostgresStoreError)?.code == .invalidValue
            }
            let wrongKey = StreamedUpserts(entityName: "Author", key: "name", lowest: .string("a"))
            #expect(throws: CVManagedStructError.self) {
                _ = try store.apply(upserts: wrongKey) { _ in }
            }
            #expect(try store.count(FetchRequest(entityName: "Author")) == 0)
            // A quote is only a value: the probe binds it, and the row is inserted as it is.
            let quoted = "o'brien \"x\""
            _ = try store.apply(upserts: StreamedUpserts(entityName: "Author", key: "id", lowest: .string(quoted))) {
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
    @Test func anIdentifierTakenDuringThePlainInsertIsUpsertedInstead() throws {
        let log = SQLLog()
        let retries = ErrorBox()
        try TestDatabase.withExampleStore(configure: { configuration in
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
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
                    [try PostgresValue("INSERT INTO %" + schema + "%Product%")]
                ).decode(Int64.self, row: 0, column: 0)
                if waiting == 0 { Thread.sleep(forTimeInterval: 0.005) }
            }
            #expect(waiting == 1)
            try other.execute("COMMIT")
            done.wait()

            #expect(failure.all.isEmpty, "\(failure.all)")
            let violations = retries.all.compactMap { $0 as? DatabaseError }
            #expect(violations.count == 1 && violations.first?.sqlState == .uniqueViolation)
            // The first attempt's plain inserts, then the second attempt's upserts (no second probe).
            let inserts = log.productInserts(from: 0)
            #expect(inserts.filter { !$0.contains("ON CONFLICT") }.count >= 1)
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
}
