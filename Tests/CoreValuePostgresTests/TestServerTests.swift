import CoreValue
import CoreValueExamples
import CoreValuePostgres
@testable import CoreValueTesting
import Foundation
import LibPQ
import Testing

/// `TestServer`: the throwaway server a test process starts itself when `DATABASE_URL` is unset (`TestSchema`
/// does, through `TestServer.shared()`). Here one is started explicitly, used through the store and the
/// migrator, and stopped. As root (CI), `initdb` and the server run as the `postgres` user.
@Suite struct TestServerTests {
    @Test(.enabled(if: TestServer.canStart)) func aServerOfItsOwnServesAStoreAndIsGoneOnceStopped() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        // A Unix socket in the server's own directory, no TCP port.
        #expect(server.url.hasPrefix("postgresql://corevalue@/postgres?host=\(server.directory.path)/sock&port="))
        #expect(FileManager.default.fileExists(atPath: server.directory.appendingPathComponent("data").path))

        _ = try Migrator(url: server.url, schema: "shop").migrate(model: try ExampleModel.make())
        let store = try PostgresStore(
            model: try ExampleModel.make(), configuration: try .init(url: server.url, schema: "shop"))
        try Product(id: 1, name: "one", price: 1).save(ManagedObjectContext(store: store))
        let found: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: .key("id") == Int32(1))
        #expect(found == [Product(id: 1, name: "one", price: 1)])
        // Durability is off, as a test wants it.
        let connection = try Connection(server.url)
        #expect(try connection.query("SHOW fsync").decode(String.self, row: 0, column: 0) == "off")
        connection.close()
        store.close()

        server.stop()
        server.stop()  // a second call does nothing
        #expect(!FileManager.default.fileExists(atPath: server.directory.path))
        #expect(throws: LibPQError.self) { try Connection(server.url) }
    }

    @Test(.enabled(if: TestServer.canStart)) func aServerWhoseProcessDiedIsStoppedAndDeletedByItsWatchdog() throws {
        // A stand-in for a test process that dies without stopping its server.
        let standIn = Process()
        standIn.executableURL = URL(fileURLWithPath: "/bin/sleep")
        standIn.arguments = ["600"]
        try standIn.run()
        let server = try TestServer.start(watching: standIn.processIdentifier)
        let connection = try Connection(server.url)
        connection.close()
        kill(standIn.processIdentifier, SIGKILL)
        standIn.waitUntilExit()
        // The watchdog polls once a second; give it ten.
        let deadline = ContinuousClock.now + .seconds(10)
        while FileManager.default.fileExists(atPath: server.directory.path), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(!FileManager.default.fileExists(atPath: server.directory.path))
        #expect(throws: LibPQError.self) { try Connection(server.url) }
    }

    /// The message names the three ways to a server, in the order they are tried.
    @Test func withoutAServerTheErrorSaysWhatToDo() {
        let error = TestSchemaError(reason: "COREVALUE_TEST_SERVER=off, so no server of its own is started")
        let text = "\(error)"
        #expect(text.hasPrefix("DATABASE_URL is not set and COREVALUE_TEST_SERVER=off"))
        for way in [
            "(1) DATABASE_URL", "(2) PostgreSQL's server binaries", "COREVALUE_PG_BIN", "(3) a working `docker`",
        ] {
            #expect(text.contains(way), "\(way)")
        }
    }
}
