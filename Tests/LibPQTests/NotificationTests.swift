import LibPQ
import Testing

@Suite struct NotificationTests {
    @Test func notificationCrossesConnections() throws {
        try TestDatabase.withSchema { listener, schema in
            let channel = "chan \(schema)"  // needs quoting: space and length
            try listener.listen(channel)
            #expect(try listener.waitForNotifications(timeout: .milliseconds(10)).isEmpty)
            let sender = try TestDatabase.connect(schema: schema)
            defer { sender.close() }
            try sender.notify(channel, payload: "hello ✉️")
            try sender.notify("other \(schema)", payload: "not for us")
            var received: [Notification] = []
            for _ in 0..<10 where received.isEmpty {
                received = try listener.waitForNotifications(timeout: .seconds(10))
            }
            #expect(received == [Notification(channel: channel, payload: "hello ✉️", pid: sender.backendPID)])
            try listener.unlisten(channel)
            try sender.notify(channel)
            #expect(try listener.query("select 1").rowCount == 1)  // a round trip lets the notify arrive
            #expect(try listener.waitForNotifications(timeout: .zero).isEmpty)
        }
    }
}
