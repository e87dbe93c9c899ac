import Foundation
import LibPQ

/// A fixed-size pool of libpq connections, safe to share between threads.
///
/// Connections open lazily, one per concurrent user up to ``capacity``; further callers wait. A connection
/// is checked before it is handed out (a broken one is replaced) and after it comes back (one that is broken
/// or still inside a transaction is closed, never reused).
public final class ConnectionPool: @unchecked Sendable {
    // @unchecked: the connections are touched only under `condition`, or by the single caller that checked
    // one out.
    private let configuration: ConnectionConfiguration
    /// The largest number of connections open at once.
    public let capacity: Int
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    private var closed = false

    /// Creates a pool; no connection is opened until one is needed.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidConfiguration`` when `capacity` is less than 1.
    public init(configuration: ConnectionConfiguration, capacity: Int) throws {
        guard capacity >= 1 else {
            throw PostgresStoreError(.invalidConfiguration, "pool size must be at least 1, got \(capacity)")
        }
        self.configuration = configuration
        self.capacity = capacity
    }

    deinit { close() }

    /// Runs `body` with a connection of its own, then returns the connection to the pool.
    ///
    /// - Throws: ``PostgresStoreError/Code/poolClosed`` after ``close()``, the driver's connection error when
    ///   a new connection fails, and whatever `body` throws.
    public func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Closes idle connections and refuses further checkouts; connections in use close when returned.
    public func close() {
        condition.lock()
        closed = true
        let connections = idle
        open -= idle.count
        idle = []
        condition.broadcast()
        condition.unlock()
        for connection in connections { connection.close() }
    }

    private func checkOut() throws -> Connection {
        condition.lock()
        while !closed && idle.isEmpty && open >= capacity { condition.wait() }
        guard !closed else {
            condition.unlock()
            throw PostgresStoreError(.poolClosed, "the connection pool is closed")
        }
        if let connection = idle.popLast() {
            condition.unlock()
            guard connection.isBroken else { return connection }
            connection.close()
            return try replace()
        }
        open += 1
        condition.unlock()
        return try replace()
    }

    /// Opens a connection for a slot already counted in `open`; gives the slot back on failure.
    private func replace() throws -> Connection {
        do {
            return try Connection(configuration)
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: Connection) {
        let reusable = !connection.isBroken && connection.transactionStatus == .idle
        condition.lock()
        if reusable && !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
        if !reusable || closed { connection.close() }
    }
}
