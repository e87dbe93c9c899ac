import CLibPQ

extension Connection {
    /// Starts listening on `channel` (`LISTEN "channel"`; the name is quoted, so it is case-sensitive).
    ///
    /// - Throws: ``DatabaseError`` or ``LibPQError`` when closed or lost, `.encoding` when the channel name
    ///   contains a NUL character.
    package func listen(_ channel: String) throws {
        try channel.checkNoNUL("the channel name")
        try execute("LISTEN \(Connection.quoteIdentifier(channel))")
    }

    /// Stops listening on `channel` (`UNLISTEN "channel"`).
    ///
    /// - Throws: ``DatabaseError`` or ``LibPQError`` when closed or lost, `.encoding` when the channel name
    ///   contains a NUL character.
    package func unlisten(_ channel: String) throws {
        try channel.checkNoNUL("the channel name")
        try execute("UNLISTEN \(Connection.quoteIdentifier(channel))")
    }

    /// Sends a notification with `pg_notify($1, $2)`; inside a transaction it is delivered at COMMIT.
    ///
    /// - Throws: ``DatabaseError`` (e.g. payload too long) or ``LibPQError`` (`.encoding` when the channel
    ///   or the payload contains a NUL character).
    package func notify(_ channel: String, payload: String = "") throws {
        try query("select pg_notify($1, $2)", [PostgresValue(channel), PostgresValue(payload)])
    }

    /// Returns the notifications that arrived, waiting up to `timeout` for the first one.
    ///
    /// Returns at once when notifications are already queued, and an empty array when none arrives in
    /// time. Waiting uses `poll()` on the connection's socket, so no CPU is spent.
    /// - Throws: ``LibPQError`` `.connectionLost` or `.connectionClosed`.
    package func waitForNotifications(timeout: Duration) throws -> [Notification] {
        let handle = try requireHandle()
        let clock = ContinuousClock()
        // Clamped so that `now + timeout` and the remaining wait's components cannot overflow; a century
        // is as good as forever here.
        let deadline = clock.now.advanced(by: min(timeout, .seconds(Int64(100 * 366 * 86_400))))
        while true {
            guard PQconsumeInput(handle) == 1 else {
                // What arrived before the connection broke is handed out first; the next call throws.
                let received = drainNotifications(handle)
                if !received.isEmpty { return received }
                throw clientError(handle, "reading notifications")
            }
            let received = drainNotifications(handle)
            if !received.isEmpty { return received }
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return [] }
            let (seconds, attoseconds) = remaining.components
            _ = try waitForSocket(handle, timeoutMilliseconds: Self.pollMilliseconds(seconds, attoseconds))
        }
    }

    /// A remaining wait as `poll()` milliseconds: rounded up, clamped to `Int32.max` (about 24.8 days, after
    /// which the loop polls again), so a huge timeout cannot overflow.
    static func pollMilliseconds(_ seconds: Int64, _ attoseconds: Int64) -> Int32 {
        let limit = Int64(Int32.max)
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow, milliseconds < limit else { return Int32.max }
        let total = milliseconds + attoseconds / 1_000_000_000_000_000 + 1
        return Int32(clamping: max(0, min(total, limit)))
    }

    /// Takes every queued notification from libpq (`PQnotifies`), freeing each.
    private func drainNotifications(_ handle: OpaquePointer) -> [Notification] {
        var received: [Notification] = []
        while let notify = PQnotifies(handle) {
            let value = notify.pointee
            received.append(
                Notification(
                    channel: value.relname.map { String(cString: $0) } ?? "",
                    payload: value.extra.map { String(cString: $0) } ?? "",
                    pid: value.be_pid))
            PQfreemem(notify)
        }
        return received
    }
}
