@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
@testable import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// A lost `COMMIT` reply, made deterministic by a proxy of the test's own (``CommitCuttingProxy``): cut after
/// the server committed (the reply dropped) or before the `COMMIT` reached it (the backend left idle in the
/// transaction, holding its locks). Either way the save returns normally, its effect applied exactly once,
/// on every route a save's `COMMIT` takes: inside a one-row upsert, update or delete (the rows read back
/// from the commit table), alone after several statements, with the history record.
@Suite(.serialized) struct CommitResolutionTests {
    static let cuts: [CommitCuttingProxy.Cut] = [.afterCommit, .beforeCommit]

    /// A store on a fresh example schema through the proxy (one connection), the direct store, the proxy.
    static func withProxiedStore(
        _ function: String = #function, history: Bool = false,
        configure: (inout PostgresStore.Configuration) -> Void = { _ in },
        _ body: (_ proxied: PostgresStore, _ direct: PostgresStore, CommitCuttingProxy) throws -> Void
    ) throws {
        try TestDatabase.withExampleStore(function) { direct, url, schema in
            let server = try #require(URLComponents(string: url), "DATABASE_URL must be a postgresql:// URL")
            let host = server.host == "localhost" ? "127.0.0.1" : (server.host ?? "127.0.0.1")
            let proxy = try CommitCuttingProxy(to: host, port: UInt16(server.port ?? 5432))
            defer { proxy.stop() }
            if history { _ = try Migrator(url: url, schema: schema).migrate(model: direct.model, recordsHistory: true) }
            var proxied = server
            proxied.host = "127.0.0.1"
            proxied.port = Int(proxy.port)
            proxied.queryItems = [
                URLQueryItem(name: "sslmode", value: "disable"), .init(name: "gssencmode", value: "disable"),
            ]
            var configuration = try PostgresStore.Configuration(url: try #require(proxied.string), schema: schema)
            configuration.poolSize = 1
            configuration.recordsHistory = history
            if let size = TestDatabase.statementCacheSize { configuration.preparedStatementCacheSize = size }
            configure(&configuration)
            let store = try PostgresStore(model: direct.model, configuration: configuration)
            defer { store.close() }
            try body(store, direct, proxy)
        }
    }

    static func rows(_ store: PostgresStore, _ entity: String) throws -> [RowSnapshot] {
        try store.fetch(FetchRequest(entityName: entity))
    }

    @Test(arguments: cuts) func aUniqueSaveWhoseReplyWasLostIsAppliedOnceAndReturns(cut: CommitCuttingProxy.Cut) throws
    {
        try Self.withProxiedStore { store, direct, proxy in
            proxy.arm(cut)
            let before = store.statistics
            try Author(id: "a", name: "Ann").save(ManagedObjectContext(store: store))
            #expect(proxy.cuts == 1)
            let stored = try Self.rows(direct, "Author")
            // Once: an upsert run twice would be at version 2.
            #expect(stored.count == 1 && stored.first?.version == 1)
            // Found committed: nothing run again; not committed: run again once.
            #expect(store.statistics.since(before).retries == (cut == .afterCommit ? 0 : 1))
            try Author(id: "a", name: "Anna").save(ManagedObjectContext(store: store))
            #expect(try Self.rows(direct, "Author").first?.version == 2)
        }
    }

    @Test(arguments: cuts) func aPersistentUpdateWhoseReplyWasLostTakesTheVersionItWrote(cut: CommitCuttingProxy.Cut)
        throws
    {
        try Self.withProxiedStore { store, direct, proxy in
            var employee = Employee(name: "Eve", age: 30, position: nil, department: "R&D", job: "dev")
            try employee.save(ManagedObjectContext(store: direct))
            let context = ManagedObjectContext(store: store)
            var found = try #require((try Employee.query(context, predicate: nil) as [Employee]).first)
            found.age = 31
            proxy.arm(cut)
            try found.save(context)
            #expect(proxy.cuts == 1)
            #expect(try Self.rows(direct, "Employee").map(\.version) == [2])
            // The context holds version 2: its next update is not a conflict, and writes version 3.
            found.age = 32
            try found.save(context)
            #expect(try Self.rows(direct, "Employee").map(\.version) == [3])
        }
    }

    @Test(arguments: cuts) func aDeleteWhoseReplyWasLostIsDone(cut: CommitCuttingProxy.Cut) throws {
        try Self.withProxiedStore { store, direct, proxy in
            var employee = Employee(name: "Eve", age: 30, position: nil, department: "R&D", job: "dev")
            try employee.save(ManagedObjectContext(store: direct))
            let context = ManagedObjectContext(store: store)
            var found = try #require((try Employee.query(context, predicate: nil) as [Employee]).first)
            proxy.arm(cut)
            try found.delete(context)
            try context.save()
            #expect(proxy.cuts == 1)
            #expect(try Self.rows(direct, "Employee").isEmpty)
        }
    }

    @Test(arguments: cuts) func aSaveOfSeveralStatementsWhoseLoneCommitLostItsReplyIsAppliedOnce(
        cut: CommitCuttingProxy.Cut
    ) throws {
        try Self.withProxiedStore { store, direct, proxy in
            let staff = ["Ann", "Bob"].map { Employee(name: $0, age: 30, position: nil, department: "R&D", job: "dev") }
            var company = Company(name: "Acme", employees: staff)
            proxy.arm(cut)
            try company.save(ManagedObjectContext(store: store))
            #expect(proxy.cuts == 1)
            #expect(try Self.rows(direct, "Company").count == 1)
            #expect(try Self.rows(direct, "Employee").count == 2)
            let read = try #require(
                (try Company.query(ManagedObjectContext(store: direct), predicate: nil) as [Company]).first)
            #expect(read.employees.map(\.name) == ["Ann", "Bob"] && read.objectID == company.objectID)
        }
    }

    @Test(arguments: cuts) func aSaveWithHistoryWhoseReplyWasLostIsRecordedOnce(cut: CommitCuttingProxy.Cut) throws {
        try Self.withProxiedStore(history: true) { store, direct, proxy in
            let start = try store.currentHistoryToken()
            proxy.arm(cut)
            try Author(id: "h", name: "Hal").save(ManagedObjectContext(store: store))
            #expect(proxy.cuts == 1)
            #expect(try Self.rows(direct, "Author").map(\.version) == [1])
            let recorded = try store.history(after: start, limit: 10)
            #expect(recorded.count == 1 && recorded.first?.changes.count == 1)
        }
    }

    @Test func aLostCommitThatDidNotCommitIsUnknownWhenTheTableWasEmptiedByHand() throws {
        try Self.withProxiedStore { store, direct, proxy in
            let table = SQLIdentifier(SchemaMapping.commitTable, schema: direct.schema).quoted
            try TestDatabase.execute(direct.configuration.connection.description, "TRUNCATE \(table)")
            proxy.arm(.beforeCommit)
            #expect {
                try Author(id: "t", name: "Tom").save(ManagedObjectContext(store: store))
            } throws: { error in
                let error = error as? PostgresStoreError
                return error?.code == .commitOutcomeUnknown && error?.message.contains("sentinel") == true
            }
            #expect(try Self.rows(direct, "Author").isEmpty)
        }
    }

    @Test func oldIdentifiersArePrunedAfterAWriteButNeverTheSentinel() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            let table = SQLIdentifier(SchemaMapping.commitTable, schema: schema).quoted
            try TestDatabase.execute(
                url,
                "INSERT INTO \(table) (id, at) VALUES (gen_random_uuid(), now() - interval '2 hours'), "
                    + "(gen_random_uuid(), now() - interval '10 minutes')")
            // Due: the last pruning was longer ago than the interval.
            store.lastCommitPrune.withLock { $0 = .now - PostgresStore.commitPruneInterval - .seconds(1) }
            try Author(id: "p", name: "Pat").save(ManagedObjectContext(store: store))
            let connection = try Connection(url)
            defer { connection.close() }
            let left = try connection.query(
                "SELECT count(*) FILTER (WHERE at = '-infinity'), count(*) FILTER (WHERE at < now() - interval '1 hour'), "
                    + "count(*) FROM \(table)")
            // The sentinel, the recent row and the save's own; the two-hour-old one is gone.
            #expect(try left.decode(Int64.self, row: 0, column: 0) == 1)
            #expect(try left.decode(Int64.self, row: 0, column: 1) == 1)
            #expect(try left.decode(Int64.self, row: 0, column: 2) == 3)
        }
    }

    /// A statement that returns one row at most (a one-row upsert, a one-row update) keeps its row without an
    /// aggregate: the same JSON `jsonb_agg` makes, which the lookup reads back.
    @Test func aOneRowSaveKeepsItsRowAsTheAggregateWould() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            let connection = try Connection(url)
            defer { connection.close() }
            let row = #"WITH w AS (SELECT 5::bigint AS "_pk", 3::bigint AS "_version", 'k'::text AS id"#
            let same = try connection.query(
                row + ") SELECT (SELECT jsonb_agg(w) FROM w) = (SELECT jsonb_build_array(to_jsonb(w)) FROM w)")
            #expect(try same.decode(Bool.self, row: 0, column: 0))
            let none = try connection.query(
                row + " WHERE false) SELECT (SELECT jsonb_agg(w) FROM w) IS NULL "
                    + "AND (SELECT jsonb_build_array(to_jsonb(w)) FROM w) IS NULL")
            #expect(try none.decode(Bool.self, row: 0, column: 0))

            try Author(id: "k", name: "Kim").save(ManagedObjectContext(store: store))
            let context = ManagedObjectContext(store: store)
            let found: [Author] = try Author.query(context, predicate: .key("id") == "k")
            var kim = try #require(found.first)
            kim.name = "Kit"
            try kim.save(context)
            let key = try #require(try Self.rows(store, "Author").first?.id.primaryKey)
            let table = SQLIdentifier(SchemaMapping.commitTable, schema: schema).quoted
            let kept = try connection.query("SELECT result::text FROM \(table) WHERE at > '-infinity' ORDER BY id")
            #expect(kept.rowCount == 2)
            #expect(try kept.decode(String.self, row: 0, column: 0) == #"[{"id": "k", "_pk": \#(key), "_version": 1}]"#)
            #expect(try kept.decode(String.self, row: 1, column: 0) == #"[{"_pk": \#(key), "_version": 2}]"#)
        }
    }

    @Test func withoutResolutionALostReplyIsStillReportedAsUnknown() throws {
        try Self.withProxiedStore(configure: { $0.resolvesCommitOutcomes = false }) { store, direct, proxy throws in
            proxy.arm(.afterCommit)
            #expect {
                try Author(id: "u", name: "Una").save(ManagedObjectContext(store: store))
            } throws: { error in
                (error as? PostgresStoreError)?.code == .commitOutcomeUnknown
            }
            #expect(try Self.rows(direct, "Author").count == 1)
        }
    }
}
