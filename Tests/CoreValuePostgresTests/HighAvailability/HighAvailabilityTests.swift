@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// What a user can rely on when PostgreSQL is several servers, tried on real ones. These tests change the
/// servers (failovers, restarts), so they run one at a time, only in `make test-ha`.
@Suite(.serialized, .enabled(if: HASetup.isAvailable, "needs the servers of scripts/ha-up.sh (make test-ha)"))
struct HighAvailabilityTests {
    @Test func aWriterAcrossAFailoverLosesNoAcknowledgedWriteAndSeesNoError() throws {
        try TestDatabase.withExampleStore(poolSize: 2, configure: { $0.failoverBudget = .seconds(30) }) {
            store, url, schema in
            print("ha: \(try FailoverWriter.runAcrossAFailover(store, url: url, schema: schema))")
        }
    }

    @Test func aListenerAcrossAFailoverListensAgainAndReportsTheGap() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { _, url, schema in
            var configuration = try PostgresStore.Configuration(url: url, schema: schema)
            configuration.notificationChannel = "cv_" + schema
            let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { store.close() }
            let listener = try store.makeChangeListener()
            defer { listener.close() }
            var first = Car.sample("before the failover")
            try first.save(ManagedObjectContext(store: store))
            var heard: [ChangeListener.Event] = []
            try HASetup.wait("the first change") {
                heard += try listener.events(timeout: .milliseconds(100))
                return !heard.isEmpty
            }
            #expect(heard.count == 1)

            try HASetup.run("failover")
            var gap: ChangeListener.Gap?
            try HASetup.wait("the listener's report of its gap") {
                for case .mayHaveMissedChanges(let reported) in try listener.events(timeout: .milliseconds(100)) {
                    gap = reported
                }
                return gap != nil
            }
            #expect(listener.isUsable)
            var second = Car.sample("after the failover")
            try second.save(ManagedObjectContext(store: store))
            var after: [StoreChange] = []
            try HASetup.wait("the change after the failover") {
                for case .change(let change) in try listener.events(timeout: .milliseconds(100)) {
                    after.append(change)
                }
                return !after.isEmpty
            }
            #expect(after.flatMap(\.inserted) == [try #require(second.objectID)])
        }
    }

    @Test func aStoreBehindPgbouncerIsHeardThroughItsDirectListenConnection() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { _, url, schema in
            var configuration = try PostgresStore.Configuration(url: try #require(HASetup.pgbouncerURL), schema: schema)
            configuration.notificationChannel = "cv_" + schema
            configuration.listenConnection = try ConnectionConfiguration(url)
            let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { store.close() }
            let listener = try store.makeChangeListener()
            defer { listener.close() }
            var car = Car.sample("through pgbouncer")
            try car.save(ManagedObjectContext(store: store))
            var heard: [StoreChange] = []
            try HASetup.wait("the change saved through pgbouncer") {
                heard += try listener.next(timeout: .milliseconds(100))
                return !heard.isEmpty
            }
            #expect(heard.flatMap(\.inserted) == [try #require(car.objectID)])
        }
    }

    @Test func aReadOnlyStoreReadsThroughAStandbyRestartAndReturnsToTheStandby() throws {
        try TestDatabase.withExampleStore { writer, _, schema in
            var cars = (0..<5).map { Car.sample("read \($0)") }
            try cars.saveAll(ManagedObjectContext(store: writer))

            let name = "cvro_" + schema.suffix(8)
            let url = try #require(HASetup.preferStandbyURL) + "&application_name=\(name)"
            var configuration = try PostgresStore.Configuration(url: url, schema: schema)
            configuration.readOnly = true
            configuration.poolSize = 2
            configuration.maxConnectionLifetime = .milliseconds(500)
            let reader = try PostgresStore(model: ExampleModel.model, configuration: configuration)
            defer { reader.close() }

            /// Which kinds of server the reader's connections are on now.
            func readerIsOn() throws -> (standby: Bool, primary: Bool) {
                let admin = try Connection(try #require(HASetup.primaryURL))
                defer { admin.close() }
                let query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
                let onPrimary = try admin.query(query, [try PostgresValue(name)]).decode(Int64.self, row: 0, column: 0)
                let standby = try? Connection(try #require(HASetup.preferStandbyURL))
                defer { standby?.close() }
                let onStandby =
                    try standby.map { connection in
                        try HASetup.isStandby(connection)
                            ? connection.query(query, [try PostgresValue(name)]).decode(Int64.self, row: 0, column: 0)
                            : 0
                    } ?? 0
                return (onStandby > 0, onPrimary > 0)
            }
            func read() throws {
                let read: [Car] = try Car.query(ManagedObjectContext(store: reader), predicate: nil)
                #expect(read.count == cars.count)
            }

            try read()
            #expect(try readerIsOn() == (standby: true, primary: false))

            // The standby goes away: reads go on (on the primary), without an error.
            try HASetup.run("stop-standby")
            for _ in 0..<20 { try read() }
            #expect(try readerIsOn().primary)

            // It comes back: within the connection lifetime the reader is on it again.
            try HASetup.run("start-standby")
            try HASetup.wait("the reader back on the standby") {
                try read()
                let on = try readerIsOn()
                return on.standby && !on.primary
            }
        }
    }
}
