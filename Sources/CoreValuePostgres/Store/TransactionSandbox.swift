import Foundation
import LibPQ

/// One connection inside one transaction that is never committed: the sessions of a store opened for a test's
/// transaction sandbox (`TestSchema.withTransaction` in `CoreValueTesting`, as Ecto's SQL sandbox), whose work
/// ``rollBack()`` undoes at the end.
///
/// The store's transactions become savepoints of the sandbox's transaction (`Connection.withTransaction` nests
/// that way, and never pipelines a `COMMIT` inside a savepoint), so a failed save rolls back its savepoint and
/// the test goes on. Each call the store makes runs under a savepoint of the sandbox's own, too: a read that
/// fails (a cancelled or timed-out statement) would otherwise abort the whole transaction, and every later
/// call of the test would fail with "current transaction is aborted".
///
/// Calls from several threads (async calls, tasks) take turns on the one connection: a pool of one. A call
/// made while another call of the same thread holds the connection (a streamed save's producer or an event
/// handler calling the store) cannot wait for it, and throws ``PostgresStoreError/Code/sandboxed``.
package final class TransactionSandbox: @unchecked Sendable {
    // @unchecked: `connection`, `holder`, `over` and `hasSavepoint` are touched only under `condition`, or by
    // the one caller whose turn it is (``withConnection(_:)``), as in `ConnectionPool`.
    private let condition = NSCondition()
    private var connection: Connection?
    /// The thread whose call holds the connection, `nil` when it is free.
    private var holder: pthread_t?
    /// Why the sandbox can no longer be used (its connection broke, or its transaction ended), once it is so.
    private var over: String?
    /// Whether ``savepoint`` was set by an earlier call (and so is released before the next is set).
    private var hasSavepoint = false
    /// How long a call waits for another thread's call to give the connection back.
    private let waitTimeout: Duration

    /// The savepoint each call runs under.
    private static let savepoint = "corevalue_sandbox_call"

    /// Connects and begins the sandbox's transaction (read committed: each test sees its own rows and no other
    /// sandbox's, which are never committed).
    ///
    /// - Throws: The driver's connection error; the server's error for `BEGIN`.
    package init(configuration: ConnectionConfiguration, statementCacheCapacity: Int, waitTimeout: Duration) throws {
        let connection = try Connection(configuration)
        connection.statementCacheCapacity = statementCacheCapacity
        do {
            try connection.execute("BEGIN")
        } catch {
            connection.close()
            throw error
        }
        self.connection = connection
        self.waitTimeout = waitTimeout
    }

    deinit { connection?.close() }

    /// Rolls the sandbox's transaction back and closes the connection, after a call still running on another
    /// thread has given it back (closing it under that call would pull libpq's connection from under it).
    /// Later calls throw ``PostgresStoreError/Code/poolClosed``. Errors are ignored: closing the connection
    /// rolls back too, and the test has its own result.
    package func rollBack() {
        condition.lock()
        while holder != nil { condition.wait() }
        let connection = self.connection
        self.connection = nil
        condition.broadcast()
        condition.unlock()
        guard let connection else { return }
        // An explicit ROLLBACK, not just a closed socket: when it returns, the rows and locks are gone, so a
        // test of another sandbox waiting on one of its unique values goes on at once.
        if !connection.isBroken { try? connection.execute("ROLLBACK") }
        connection.close()
    }

    /// Runs `body` on the connection, under a savepoint rolled back when the call leaves the transaction
    /// failed, once no other thread's call holds it.
    ///
    /// - Throws: ``PostgresStoreError/Code/sandboxed`` for a call inside another call of this thread, or once the
    ///   sandbox is over; ``PostgresStoreError/Code/poolTimeout`` when another thread's call keeps the
    ///   connection past the wait timeout; ``PostgresStoreError/Code/poolClosed`` after ``rollBack()``; what
    ///   `body` throws.
    func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try takeTurn()
        defer { giveBack() }
        try setSavepoint(on: connection)
        let value: T
        do {
            value = try body(connection)
        } catch {
            restore(connection)
            throw error
        }
        // A statement error the body caught (the store's case-mapping probe does) fails the transaction too.
        restore(connection)
        return value
    }

    /// Waits for the connection to be free and takes it for this thread.
    private func takeTurn() throws -> Connection {
        let deadline = Date(timeIntervalSinceNow: waitTimeout.timeInterval)
        let thread = pthread_self()
        condition.lock()
        defer { condition.unlock() }
        if let holder, pthread_equal(holder, thread) != 0 {
            throw PostgresStoreError(
                .sandboxed,
                "a store call was made while another call of the same thread held the transaction sandbox's one "
                    + "connection (from a streamed save's producer or an event handler?); a sandbox has no second "
                    + "connection to give it")
        }
        while holder != nil && connection != nil {
            if !condition.wait(until: deadline), holder != nil && connection != nil {
                throw PostgresStoreError(
                    .poolTimeout,
                    "the transaction sandbox's one connection stayed in use for \(waitTimeout) by another call of "
                        + "the test (a stream being iterated holds it until it ends)")
            }
        }
        if let over { throw PostgresStoreError(.sandboxed, over) }
        guard let connection else {
            throw PostgresStoreError(
                .poolClosed, "the transaction sandbox was rolled back: its store is not usable after the test's body")
        }
        holder = thread
        return connection
    }

    private func giveBack() {
        condition.lock()
        holder = nil
        condition.signal()
        condition.unlock()
    }

    /// Sets the call's savepoint, releasing the previous call's in the same round trip (released, not left
    /// nested: a stack of thousands of subtransactions would slow every later statement), and closes the
    /// cursors earlier calls left: a stream's cursor is closed by its transaction's end, which a savepoint's
    /// release is not, and the next stream would find its name taken.
    private func setSavepoint(on connection: Connection) throws {
        let set = "SAVEPOINT \(Self.savepoint)"
        do {
            try connection.execute(hasSavepoint ? "CLOSE ALL; RELEASE SAVEPOINT \(Self.savepoint); \(set)" : set)
        } catch {
            restore(connection)
            throw error
        }
        hasSavepoint = true
    }

    /// Rolls back to the call's savepoint when the call left the transaction failed; marks the sandbox over
    /// when its connection broke or its transaction ended.
    private func restore(_ connection: Connection) {
        if connection.transactionStatus == .inError {
            try? connection.execute("ROLLBACK TO SAVEPOINT \(Self.savepoint)")
        }
        switch connection.transactionStatus {
        case .inTransaction:
            return
        case .idle:
            end("the transaction sandbox's transaction ended (a COMMIT or ROLLBACK sent on its connection)")
        case .inError:
            end("the transaction sandbox's transaction failed and could not be rolled back to the call's savepoint")
        case .active, .unknown:
            end("the transaction sandbox's connection was lost: its transaction, and all the test saved, are gone")
        }
    }

    private func end(_ reason: String) {
        condition.lock()
        if over == nil { over = reason }
        condition.unlock()
    }
}

extension TransactionSandbox: SessionSource {
    func withSession<T>(_ body: (any DatabaseSession) throws -> T) throws -> T {
        try withConnection { try body($0) }
    }
}
