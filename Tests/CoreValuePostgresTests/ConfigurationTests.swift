@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// `PostgresStore.Configuration`: one value with defaults, the statement timeout, and the event hook.
@Suite struct ConfigurationTests {
    @Test func badSettingsAreTypedErrorsBeforeConnecting() throws {
        var configuration = try PostgresStore.Configuration(url: "postgresql://nobody@127.0.0.1:1/none")
        configuration.maxAttempts = 0
        #expect(throws: PostgresStoreError.self) {
            try PostgresStore(model: ExampleModel.model, configuration: configuration)
        }
        configuration.maxAttempts = 3
        configuration.statementTimeout = .zero
        #expect {
            try PostgresStore(model: ExampleModel.model, configuration: configuration)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .invalidConfiguration
                && "\(error)".contains("statement timeout")
        }
        configuration.statementTimeout = nil
        configuration.poolSize = 0
        #expect(throws: PostgresStoreError.self) {
            try PostgresStore(model: ExampleModel.model, configuration: configuration)
        }
    }

    @Test func eventsNameEveryStatementButNeverAValue() async throws {
        try await withConfiguredStore { configuration in
            configuration.statementTimeout = .seconds(5)
        } _: { store, events, _, _ in
            let context = ManagedObjectContext(store: store)
            try Author(id: "id-secret-4711", name: "name-secret-0815").save(context)
            let found: [Author] = try Author.query(
                ManagedObjectContext(store: store), predicate: .key("name") == "name-secret-0815")
            #expect(found.count == 1)
            let all = events.all
            let statements = all.filter { $0.kind == .statement }
            #expect(statements.contains { $0.sql?.contains("INSERT INTO") == true && $0.rowCount == 1 })
            #expect(statements.contains { $0.sql == "SET LOCAL statement_timeout = 5000" })
            #expect(statements.allSatisfy { $0.duration != nil && $0.error == nil })
            #expect(all.contains { $0.kind == .connectionOpened })
            #expect(!all.contains { "\($0)".contains("secret") })
        }
    }

    @Test func theStatementTimeoutStopsASlowSaveAndCommitsNothing() async throws {
        try await withConfiguredStore { configuration in
            configuration.statementTimeout = .milliseconds(300)
        } _: { store, events, url, schema in
            try TestDatabase.makeAuthorInsertsSleep(url, schema, seconds: 10)
            let started = ContinuousClock.now
            #expect {
                try Author(id: "slow", name: "S").save(ManagedObjectContext(store: store))
            } throws: { error in
                (error as? PostgresStoreError)?.sqlState == .queryCanceled
            }
            #expect(ContinuousClock.now - started < .seconds(8))
            #expect(events.all.contains { $0.kind == .statement && $0.error != nil })
            try TestDatabase.execute(url, "DROP TRIGGER cv_slow ON \(SQLIdentifier("Author", schema: schema).quoted)")
            #expect(try store.fetch(FetchRequest(entityName: "Author")).isEmpty)
        }
    }

    // Synchronous: it blocks on threads of its own, which an async test would do on the cooperative pool.
    @Test func aCallerThatWaitsForAConnectionIsAnEvent() throws {
        let events = EventLog()
        try TestDatabase.withExampleStore(poolSize: 1) { configuration in
            configuration.onEvent = { events.append($0) }
        } _: { store, url, schema in
            try TestDatabase.makeAuthorInsertsSleep(url, schema, seconds: 0.5)
            // The first save holds the only connection (its insert sleeps); the second, from another thread,
            // must wait for it. (Async calls would queue on the store's one thread instead.)
            let failures = ErrorBox()
            let done = DispatchGroup()
            for index in 0..<2 {
                if index == 1 { try waitForSleep(url, schema) }
                done.enter()
                Thread {
                    defer { done.leave() }
                    do {
                        try Author(id: "w\(index)", name: "W").save(ManagedObjectContext(store: store))
                    } catch {
                        failures.append(error)
                    }
                }.start()
            }
            done.wait()
            #expect(failures.all.isEmpty)
            #expect(events.all.contains { $0.kind == .poolWait && ($0.duration ?? .zero) > .zero && $0.error == nil })
        }
    }

    /// Waits until a backend sleeps in an insert into this schema.
    private func waitForSleep(_ url: String, _ schema: String) throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if try TestDatabase.isSleeping(url, inStatementOn: schema) { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        Issue.record("no insert into \(schema) started sleeping within 120 s")
    }

    private func withConfiguredStore(
        _ function: String = #function, _ configure: (inout PostgresStore.Configuration) -> Void,
        _ body: (PostgresStore, EventLog, _ url: String, _ schema: String) async throws -> Void
    ) async throws {
        let events = EventLog()
        try await TestDatabase.withExampleStore(function) { configuration in
            configuration.onEvent = { events.append($0) }
            configure(&configuration)
        } _: { store, url, schema in
            try await body(store, events, url, schema)
        }
    }
}

/// Events collected from any thread.
final class EventLog: @unchecked Sendable {
    // @unchecked: `events` is read and written under `lock`.
    private let lock = NSLock()
    private var events: [StoreEvent] = []
    func append(_ event: StoreEvent) { lock.withLock { events.append(event) } }
    var all: [StoreEvent] { lock.withLock { events } }
}

/// A column that no longer holds the model's type is read through the server's cast to the model's type:
/// the value when it converts, the server's error when it does not; never another type's bytes taken for
/// the model's. Both ways of reading rows (binary COPY and single-row `SELECT`).
@Test(arguments: [true, false])
func aColumnOfTheWrongTypeIsCastOrRefusedNeverMisread(throughCopy: Bool) throws {
    try TestDatabase.withExampleStore { store, url, schema in
        var car = Fixtures.car("Drift")
        try car.save(ManagedObjectContext(store: store))
        let table = SQLIdentifier("Car", schema: schema).quoted
        // Text and bigint: different bytes in binary, the same value once cast.
        try TestDatabase.execute(url, "ALTER TABLE \(table) ALTER COLUMN mileage TYPE text USING mileage::text")
        var configuration = try PostgresStore.Configuration(url: url, schema: schema)
        configuration.verifySchema = false
        configuration.readsThroughCopy = throughCopy
        let drifted = try PostgresStore(model: store.model, configuration: configuration)
        defer { drifted.close() }
        let rows = try drifted.fetch(FetchRequest(entityName: "Car"))
        #expect(rows.map { $0.attributes["mileage"] } == [.int64(123_456_789_012)])
        try TestDatabase.execute(url, "UPDATE \(table) SET mileage = 'many'")
        #expect {
            try drifted.fetch(FetchRequest(entityName: "Car"))
        } throws: { error in
            (error as? PostgresStoreError)?.sqlState == .invalidTextRepresentation
        }
    }
}
