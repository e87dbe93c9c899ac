import Foundation
import LibPQ

/// A fixed-size pool of libpq connections, safe to share between threads.
///
/// Connections open lazily, one per concurrent user up to ``capacity`` (or ahead of use,
/// ``open(upTo:opened:)``); further callers wait, at most ``checkoutTimeout``. An idle connection is checked
/// without blocking before it is handed out (`Connection.isUsable`: one the server closed, say after a restart
/// or failover, is dropped and replaced), and after it comes back (one that is broken or still inside a
/// transaction is closed, never reused). When a returned connection is broken, every idle one is dropped too:
/// a lost server connection usually means its siblings are stale as well. A connection older than ``maxLifetime`` is closed instead of reused, so the
/// next one connects anew and libpq picks a host of a multi-host URL again.
///
/// The pool is `package`: a caller's session state (`SET`, `LISTEN`, prepared statements) would leak into
/// the next user of the connection, so only the store, which keeps no session state, hands connections out.
package final class ConnectionPool: @unchecked Sendable {
    // @unchecked: the connections are touched only under `condition`, or by the single caller that checked
    // one out.
    private let configuration: ConnectionConfiguration
    /// The largest number of connections open at once.
    package let capacity: Int
    /// How long a checkout waits for a free connection before it throws ``PostgresStoreError/Code/poolTimeout``.
    package let checkoutTimeout: Duration
    /// The longest a connection is kept from when it connected (`nil`: until it breaks).
    package let maxLifetime: Duration?
    /// Each connection's `statementCacheCapacity` (0: statements are sent unnamed).
    package let statementCacheCapacity: Int
    private let condition = NSCondition()
    // The three below are read and written only while `condition` is locked, which makes every access exclusive;
    // the compiler cannot see a lock, and checked each access at run time (nine checks per checkout and return).
    @exclusivity(unchecked) private var idle: [Connection] = []
    @exclusivity(unchecked) private var open = 0
    @exclusivity(unchecked) private var closed = false
    private let events: EventSink

    /// Creates a pool; no connection is opened until one is needed.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidConfiguration`` when `capacity` is less than 1 or the timeout
    ///   is not positive.
    init(
        configuration: ConnectionConfiguration, capacity: Int, checkoutTimeout: Duration = .seconds(30),
        maxLifetime: Duration? = nil, statementCacheCapacity: Int = 0, events: EventSink = EventSink(handler: nil)
    ) throws {
        self.statementCacheCapacity = statementCacheCapacity
        self.events = events
        guard capacity >= 1 else {
            throw PostgresStoreError(.invalidConfiguration, "pool size must be at least 1, got \(capacity)")
        }
        guard checkoutTimeout > .zero else {
            throw PostgresStoreError(
                .invalidConfiguration, "the pool's checkout timeout must be positive, got \(checkoutTimeout)")
        }
        self.configuration = configuration
        self.capacity = capacity
        self.checkoutTimeout = checkoutTimeout
        self.maxLifetime = maxLifetime
    }

    /// Whether a connection has outlived ``maxLifetime``.
    private func isExpired(_ connection: Connection) -> Bool {
        guard let maxLifetime else { return false }
        return ContinuousClock.now - connection.connectedAt >= maxLifetime
    }

    deinit { close() }

    /// Runs `body` with a connection of its own, then returns the connection to the pool.
    ///
    /// - Throws: ``PostgresStoreError/Code/poolClosed`` after ``close()``, ``PostgresStoreError/Code/poolTimeout``
    ///   when no connection frees up in time, the driver's connection error when a new connection fails, and
    ///   whatever `body` throws.
    package func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Closes idle connections and refuses further checkouts; connections in use close when returned.
    package func close() {
        condition.lock()
        closed = true
        let connections = takeIdle()
        condition.broadcast()
        condition.unlock()
        for connection in connections { connection.close() }
    }

    /// The number of idle connections (for tests and diagnostics).
    package var idleCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return idle.count
    }

    /// Removes every idle connection from the pool; the caller closes them outside the lock.
    private func takeIdle() -> [Connection] {
        let connections = idle
        open -= idle.count
        idle = []
        return connections
    }

    private func checkOut() throws -> Connection {
        let deadline = Date(timeIntervalSinceNow: checkoutTimeout.timeInterval)
        condition.lock()
        var waitStarted: ContinuousClock.Instant?
        while !closed && idle.isEmpty && open >= capacity {
            if events.isActive, waitStarted == nil { waitStarted = .now }
            if !condition.wait(until: deadline), !closed && idle.isEmpty && open >= capacity {
                condition.unlock()
                let error = PostgresStoreError(
                    .poolTimeout,
                    "no connection became free within \(checkoutTimeout) (all \(capacity) are in use)")
                events.send(StoreEvent(kind: .poolWait, duration: checkoutTimeout, error: error))
                throw error
            }
        }
        let waited = waitStarted.map { ContinuousClock.now - $0 }
        // At exit, after the lock is released on every path: a handler may call into the store.
        defer { if let waited { events.send(StoreEvent(kind: .poolWait, duration: waited)) } }
        guard !closed else {
            condition.unlock()
            throw PostgresStoreError(.poolClosed, "the connection pool is closed")
        }
        var dead: [Connection] = []
        defer {
            // After the lock is released, like every event.
            for connection in dead {
                events.send(StoreEvent(kind: .connectionDiscarded))
                connection.close()
            }
        }
        if idle.contains(where: isExpired) {
            // Retire every expired idle connection, not only the one handed out: the pool hands out the most
            // recently returned first, so older ones deeper in the list would otherwise stay on their host.
            // (Only when one is: rebuilding the list on every checkout cost a request two allocations.)
            var kept: [Connection] = []
            for connection in idle {
                if isExpired(connection) {
                    open -= 1
                    dead.append(connection)
                } else {
                    kept.append(connection)
                }
            }
            idle = kept
        }
        // None of the idle connections has expired now (the expired ones were just retired).
        while let connection = idle.popLast() {
            // Checked outside the lock: the connection is this caller's alone once it left `idle`, and the
            // check is a system call. Under the lock, every other thread's checkout and return waited for it
            // (fewer futex calls under `mixed`'s 8 threads: BENCHMARKS.md, thirteenth round).
            condition.unlock()
            // Non-blocking: reads what the server already sent, e.g. the FATAL of a terminated backend (and
            // the EOF behind it: `isUsable` reads twice when something was waiting).
            if connection.isUsable { return connection }
            condition.lock()
            open -= 1
            dead.append(connection)
            guard !closed else {
                condition.unlock()
                throw PostgresStoreError(.poolClosed, "the connection pool is closed")
            }
        }
        open += 1
        // Dropping dead connections may have freed more than the slot just taken.
        if dead.count > 1 { condition.broadcast() }
        condition.unlock()
        return try replace()
    }

    /// Opens connections until `count` of them (at most ``capacity``) are open, each kept idle, adding one to
    /// `opened` for each. Connections checked out meanwhile count as open.
    ///
    /// - Throws: The first connection's failure (the ones opened before it stay in the pool);
    ///   ``PostgresStoreError/Code/poolClosed`` once the pool is closed.
    package func open(upTo count: Int, opened: inout Int) throws {
        let target = min(count, capacity)
        while true {
            condition.lock()
            guard !closed else {
                condition.unlock()
                throw PostgresStoreError(.poolClosed, "the connection pool is closed")
            }
            guard open < target else {
                condition.unlock()
                return
            }
            // The slot is taken before connecting, as a checkout takes it: the two never open one too many.
            open += 1
            condition.unlock()
            checkIn(try replace())
            opened += 1
        }
    }

    /// Opens a connection for a slot already counted in `open`; gives the slot back on failure.
    private func replace() throws -> Connection {
        do {
            let connection = try Connection(configuration)
            connection.statementCacheCapacity = statementCacheCapacity
            // For a lost COMMIT's lookup, which ends this backend if it still runs (CommitMarker.backend).
            connection.learnBackendIdentity()
            events.send(StoreEvent(kind: .connectionOpened))
            return connection
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: Connection) {
        let broken = connection.isBroken
        let reusable = !broken && connection.transactionStatus == .idle && !isExpired(connection)
        condition.lock()
        // Decided under the lock: `close()` may run on another thread at any time.
        let keep = reusable && !closed
        if keep { idle.append(connection) } else { open -= 1 }
        // A lost connection (server restart, failover, terminated backends) usually means the idle ones are
        // stale too; drop them rather than let the next callers find out one retry at a time.
        let stale = broken ? takeIdle() : []
        condition.unlock()
        // After the lock is released, so that a woken waiter does not block on it at once; it rechecks.
        if stale.isEmpty { condition.signal() } else { condition.broadcast() }
        // Events are sent outside the lock: a handler may call into the store.
        if !reusable { events.send(StoreEvent(kind: .connectionDiscarded)) }
        for _ in stale { events.send(StoreEvent(kind: .connectionDiscarded)) }
        if !keep { connection.close() }
        for connection in stale { connection.close() }
    }
}
