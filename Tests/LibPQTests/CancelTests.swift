import Foundation
import LibPQ
import Testing

@Suite struct CancelTests {
    @Test func cancelFromAnotherThread() throws {
        try TestDatabase.withSchema { connection, _ in
            let canceller = try connection.makeCanceller()
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
            #expect(!connection.isBroken)
            #expect(try connection.query("select 1").rowCount == 1)
        }
    }
}
