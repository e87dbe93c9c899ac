import Foundation

/// Deterministic counters of a store's work, for tests and benchmarks.
///
/// `statements` counts the SQL statements the store generated and sent; `roundTrips` counts the times a
/// connection sent the server something and waited for its answer (as the driver counts them: a statement
/// alone, a pipeline of statements, `BEGIN`, `COMMIT`, a statement prepared on its own); `statementsPrepared`
/// counts statements prepared for a connection's statement cache (the first time each connection runs each
/// statement); `transactions` counts transactions begun; `retries` counts calls repeated after a
/// serialization failure, a deadlock, a stale prepared statement, a refused connection or a connection lost
/// before `COMMIT` was sent.
public struct StoreStatistics: Sendable, Hashable {
    /// Statements sent (excluding `BEGIN`/`COMMIT`).
    public var statements = 0
    /// Round trips to the server (statements, pipelines, `BEGIN`, `COMMIT`, preparations sent alone).
    public var roundTrips = 0
    /// Statements prepared for the connections' statement caches
    /// (``PostgresStore/Configuration/preparedStatementCacheSize``).
    public var statementsPrepared = 0
    /// Transactions begun.
    public var transactions = 0
    /// Transactions repeated after a retryable error.
    public var retries = 0

    /// Creates zeroed counters.
    public init() {}

    /// The counters accumulated since an earlier reading.
    public func since(_ earlier: StoreStatistics) -> StoreStatistics {
        var result = StoreStatistics()
        result.statements = statements - earlier.statements
        result.roundTrips = roundTrips - earlier.roundTrips
        result.statementsPrepared = statementsPrepared - earlier.statementsPrepared
        result.transactions = transactions - earlier.transactions
        result.retries = retries - earlier.retries
        return result
    }
}

/// Thread-safe storage for ``StoreStatistics``.
final class StatisticsCounter: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = StoreStatistics()

    var current: StoreStatistics {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func record(_ change: (inout StoreStatistics) -> Void) {
        lock.lock()
        change(&value)
        lock.unlock()
    }
}
