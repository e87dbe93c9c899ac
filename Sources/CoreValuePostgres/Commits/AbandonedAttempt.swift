/// The server side of a write attempt whose connection was lost: its backend may not have noticed yet (a
/// network partition, a client that gave up waiting) and still be inside the transaction, holding the row
/// locks of the statements it ran, until the server's TCP keepalive ends it (two hours by the kernel's
/// defaults). Whatever runs next on those rows, the same transaction run again first of all, would wait on
/// them; so the store ends such a backend before it runs the work again (``PostgresStore/write``), and before
/// it looks up a lost `COMMIT` (``CommitMarker/lookup()``).
struct AbandonedAttempt {
    /// The transaction-scoped advisory lock of the attempt's commit identifier (``CommitMarker/lockKey``), held
    /// by its backend once the identifier reached the server; `nil` without one.
    var lockKey: Int64?
    /// The backend of the attempt's connection (process ID and start time); `nil` when unknown (behind a
    /// pooler, whose process IDs are its own).
    var backend: (pid: Int32, start: String)?

    /// Whether there is anything to find the backend by.
    var isKnown: Bool { lockKey != nil || backend != nil }

    /// One statement, which writes nothing: ends the backend that holds the lock, and the connection's backend
    /// if it still runs (the same process ID, start time and role), waiting up to 5 s for each to exit.
    /// Returns `true` when every one found was ended, `false` when one did not exit in time, `NULL` when none
    /// was found.
    func ending() -> SQL {
        let key: SQL = "\(typedBind: .int64(lockKey ?? 0))"
        // A lock key of 0 and a process ID of 0 find nothing: no lock is ever taken on 0, no backend has it.
        let lockCondition: SQL = lockKey == nil ? "false" : "true"
        // Never a backend's start: matches nothing when the backend is unknown.
        let start = backend?.start ?? "-infinity"
        return "SELECT bool_and(pg_terminate_backend(o.pid, 5000)) FROM (SELECT l.pid FROM pg_locks AS l "
            + "WHERE \(lockCondition) AND l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            + "AND l.pid <> pg_backend_pid() "
            + "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            + "AND l.classid::bigint = ((\(key) >> 32) & 4294967295) AND l.objid::bigint = (\(key) & 4294967295) "
            + "UNION SELECT a.pid FROM pg_stat_activity AS a "
            + "WHERE a.pid = \(typedBind: .int64(Int64(backend?.pid ?? 0)))::integer "
            + "AND a.backend_start = \(typedBind: .text(start))::timestamptz AND a.usename = current_user "
            + "AND a.pid <> pg_backend_pid()) AS o"
    }
}

extension PostgresStore {
    /// Ends the backends of earlier attempts whose connection was lost mid-transaction, on the connection
    /// the next attempt runs on, before it begins: one statement each, only after such a loss. One that did
    /// not exit in 5 s is not waited for any longer: the attempt then waits on its locks, as long as
    /// ``Configuration/statementTimeout`` allows. A connection lost meanwhile keeps the rest for the next try.
    func endAbandoned(_ abandoned: inout [AbandonedAttempt], on runner: StatementRunner) throws {
        while let attempt = abandoned.first {
            if attempt.isKnown { _ = try runner.send(attempt.ending()) }
            abandoned.removeFirst()
        }
    }

    /// Whether an attempt's error lost its connection before `COMMIT` was sent, leaving a backend that may not
    /// know yet (a lost `COMMIT` reply is looked up, and that lookup ends the backend itself).
    static func lostMidTransaction(_ error: any Error) -> Bool {
        retryReason(error) == .unavailable && !(error is CommitNotMade)
    }
}
