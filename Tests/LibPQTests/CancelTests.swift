import Foundation
import LibPQ
import Testing

@Suite struct CancelTests {
    @Test func cancelFromAnotherThread() throws {
        try TestDatabase.withSchema { connection, _ in
            try expectSleepCancelled(on: connection, by: try connection.makeCanceller())
            #expect(!connection.isBroken)
            #expect(try connection.query("select 1").rowCount == 1)
        }
    }

    /// The canceller is made once per backend (a store asks for it around every statement of an async call);
    /// after a reset the connection talks to another backend, and its canceller is a new one that reaches it.
    @Test func theCancellerIsKeptUntilAResetMakesANewOne() throws {
        try TestDatabase.withSchema { connection, _ in
            let first = try connection.makeCanceller()
            #expect(try connection.makeCanceller() === first)
            let pid = connection.backendPID
            try connection.reset()
            #expect(connection.backendPID != pid)
            let second = try connection.makeCanceller()
            #expect(second !== first)
            try expectSleepCancelled(on: connection, by: second)
        }
    }

    /// Runs `pg_sleep(30)` on `connection` while another thread cancels it with `canceller` once it runs.
    private func expectSleepCancelled(on connection: Connection, by canceller: QueryCanceller) throws {
        let pid = connection.backendPID
        let url = try #require(TestDatabase.url)
        let watcher = Thread {
            // Cancel once the sleep is running (a cancel that arrives earlier would be ignored).
            guard let observer = try? Connection(url) else { return }
            defer { observer.close() }
            for _ in 0..<100_000 {
                let running = try? observer.query(
                    "select count(*) from pg_stat_activity where pid = $1 and state = 'active' "
                        + "and query like 'select pg_sleep%'", [PostgresValue(pid)])
                if (try? running?.decode(Int64.self, row: 0, column: 0)) == 1 { break }
            }
            try? canceller.cancel()
        }
        watcher.start()
        do {
            try connection.query("select pg_sleep(30)")
            Issue.record("pg_sleep(30) should have been canceled")
        } catch let error as DatabaseError {
            #expect(error.sqlState == .queryCanceled)
        }
    }
}
