import Foundation
@testable import LibPQ
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
            var received: [LibPQ.Notification] = []
            for _ in 0..<10 where received.isEmpty {
                received = try listener.waitForNotifications(timeout: .seconds(10))
            }
            #expect(received == [LibPQ.Notification(channel: channel, payload: "hello ✉️", pid: sender.backendPID)])
            try listener.unlisten(channel)
            try sender.notify(channel)
            #expect(try listener.query("select 1").rowCount == 1)  // a round trip lets the notify arrive
            #expect(try listener.waitForNotifications(timeout: .zero).isEmpty)
        }
    }

    @Test func hugeTimeoutDoesNotOverflow() throws {
        try TestDatabase.withSchema { listener, schema in
            try listener.listen("pending")
            let sender = try TestDatabase.connect(schema: schema)
            defer { sender.close() }
            try sender.notify("pending", payload: "already here")
            // Wait until the notification is queued, so the huge wait below returns at once.
            var received: [LibPQ.Notification] = []
            for _ in 0..<10 where received.isEmpty {
                received = try listener.waitForNotifications(timeout: .seconds(10))
            }
            #expect(received.map(\.payload) == ["already here"])
            try sender.notify("pending", payload: "second")
            #expect(try listener.query("select 1").rowCount == 1)  // the round trip brings the notification in
            let huge = try listener.waitForNotifications(timeout: .seconds(10_000_000_000_000_000))
            #expect(huge.map(\.payload) == ["second"])
        }
    }

    /// Beyond `Int64` milliseconds, and beyond `Int64` seconds.
    @Test(arguments: [Duration.seconds(10_000_000_000_000_000), Duration.seconds(Int64.max) * 10])
    func hugeTimeoutWaitsOnTheSocket(_ timeout: Duration) throws {
        try TestDatabase.withSchema { listener, _ in
            let url = try #require(TestDatabase.url)
            // A channel of this case's own: the cases run at once, and a channel is shared by the database.
            let channel = "late_\(UUID().uuidString.prefix(8).lowercased())"
            try listener.listen(channel)
            #expect(try listener.waitForNotifications(timeout: .zero).isEmpty)
            // Nothing is queued, so the wait computes its poll() timeout (this overflowed) and then sleeps in
            // poll() until the other thread's notification arrives.
            let sender = Thread {
                for _ in 0..<3 {
                    guard let connection = try? Connection(url) else { continue }
                    defer { connection.close() }
                    if (try? connection.notify(channel, payload: "woke up")) != nil { return }
                }
            }
            sender.start()
            let received = try listener.waitForNotifications(timeout: timeout)
            #expect(received.map(\.payload) == ["woke up"])
        }
    }

    @Test(arguments: [
        (Int64(0), Int64(0), Int32(1)),
        (Int64(1), Int64(500_000_000_000_000_000), Int32(1_501)),
        (Int64(2_147_483), Int64(0), Int32(2_147_483_001)),
        (Int64(2_147_484), Int64(0), Int32.max),
        (Int64(10_000_000_000_000_000), Int64(0), Int32.max),
        (Int64.max, Int64(999_999_999_999_999_999), Int32.max),
    ])
    func pollTimeoutIsClamped(_ seconds: Int64, _ attoseconds: Int64, _ expected: Int32) {
        #expect(Connection.pollMilliseconds(seconds, attoseconds) == expected)
    }
}
