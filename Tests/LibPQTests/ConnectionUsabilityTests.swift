import LibPQ
import Testing

@Suite struct ConnectionUsabilityTests {
    @Test func liveConnectionIsUsableAndKeepsWorking() throws {
        try TestDatabase.withSchema { connection, _ in
            #expect(connection.isUsable)
            #expect(connection.isUsable)  // checking twice changes nothing
            #expect(try connection.query("select 1").rowCount == 1)
            try connection.withTransaction { connection in
                #expect(connection.isUsable)
                #expect(connection.transactionStatus == .inTransaction)
            }
            #expect(!connection.isBroken)
        }
    }

    @Test func terminatedBackendIsNoticedWithoutAQuery() throws {
        try TestDatabase.withSchema { connection, schema in
            #expect(connection.isUsable)
            try ConnectionTests.terminate(connection, schema: schema)
            // The FATAL message and the EOF are on the socket (pg_terminate_backend waited for the backend to
            // exit); isUsable reads them without a statement. Bounded: the loop ends even if it never flips.
            var usable = true
            var checks = 0
            while usable && checks < 100_000 {
                usable = connection.isUsable
                checks += 1
            }
            #expect(!usable, "isUsable stayed true after \(checks) checks")
            // The FATAL arrives before the EOF is readable; parsing it makes the very first check enough.
            #expect(checks == 1)
            #expect(connection.isBroken)
            #expect(!connection.isUsable)
            try connection.reset()
            #expect(connection.isUsable)
            #expect(!connection.isBroken)
            #expect(try connection.query("select 1").rowCount == 1)
        }
    }

    @Test func closedConnectionIsNotUsable() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.close()
            #expect(!connection.isUsable)
            #expect(connection.isBroken)
        }
    }

    @Test func notificationsReadByIsUsableAreKept() throws {
        try TestDatabase.withSchema { listener, schema in
            try listener.listen("usable")
            let sender = try TestDatabase.connect(schema: schema)
            defer { sender.close() }
            try sender.notify("usable", payload: "kept")
            var received: [Notification] = []
            for _ in 0..<10 where received.isEmpty {
                #expect(listener.isUsable)
                received = try listener.waitForNotifications(timeout: .seconds(10))
            }
            #expect(received.map(\.payload) == ["kept"])
        }
    }
}
