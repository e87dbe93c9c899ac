import Foundation

/// What a `PostgresStore` did, handed to ``PostgresStore/Configuration/onEvent`` as it happens: each
/// statement with its duration, the retries, and the pool's connections. A `Logger` of swift-log (or any
/// logging) can sit behind the closure.
///
/// SQL text is the statement as sent, with `$1`, `$2`, ... where values go. Bound values are never part of
/// an event, so events are safe to log when rows hold personal data.
public struct StoreEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: String, Sendable, Hashable {
        /// A statement finished (``sql``, ``duration``, ``rowCount``; ``error`` when it failed).
        case statement
        /// A transaction failed with a serialization failure, a deadlock, a refused connection or a connection
        /// lost before `COMMIT` was sent, and is run again after a pause (``attempt`` is the attempt that
        /// failed, ``duration`` the pause, ``error``).
        case retry
        /// A caller waited for a free pooled connection (``duration``; ``error`` when it gave up).
        case poolWait
        /// The pool opened a connection.
        case connectionOpened
        /// The pool closed a connection that broke, came back inside a transaction, or outlived
        /// ``PostgresStore/Configuration/maxConnectionLifetime``.
        case connectionDiscarded
    }

    /// What happened.
    public var kind: Kind
    /// The statement's text, without values (``Kind/statement``).
    public var sql: String?
    /// How long the statement ran, the pause before a retry, or the wait for a connection.
    public var duration: Duration?
    /// The rows a statement returned, or the rows it changed when it returned none.
    public var rowCount: Int?
    /// The attempt that failed (``Kind/retry``), from 1.
    public var attempt: Int?
    /// The error, for a failed statement, a retry or a pool wait that gave up.
    public var error: (any Error)?

    /// Creates an event.
    public init(
        kind: Kind, sql: String? = nil, duration: Duration? = nil, rowCount: Int? = nil, attempt: Int? = nil,
        error: (any Error)? = nil
    ) {
        self.kind = kind
        self.sql = sql
        self.duration = duration
        self.rowCount = rowCount
        self.attempt = attempt
        self.error = error
    }

    /// One line: kind, duration, rows, attempt, SQL, error.
    public var description: String {
        var parts = [kind.rawValue]
        if let duration { parts.append("\(duration)") }
        if let rowCount { parts.append("rows=\(rowCount)") }
        if let attempt { parts.append("attempt=\(attempt)") }
        if let sql { parts.append(sql) }
        if let error { parts.append("error: \(error)") }
        return parts.joined(separator: " ")
    }
}

/// The closure events go to, or none (then nothing is measured or built).
struct EventSink: Sendable {
    let handler: (@Sendable (StoreEvent) -> Void)?

    var isActive: Bool { handler != nil }

    func send(_ event: @autoclosure () -> StoreEvent) {
        handler?(event())
    }
}
