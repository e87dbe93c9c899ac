import LibPQ

/// A write transaction's commit identifier and how to resolve it (``StatementRunner/commits``).
struct CommitTracking {
    let marker: CommitMarker
    /// Finds out on another connection whether the transaction committed, after its `COMMIT` reply was lost:
    /// returns the rows the statement that carried the `COMMIT` returned (``CommitMarker/carriedRows()``),
    /// or a result not to be read when none carried it; throws ``CommitNotMade`` when it did not commit, and
    /// ``PostgresStoreError/Code/commitOutcomeUnknown`` when that could not be found out in time.
    let resolve: (CommitMarker) throws -> QueryResult
}

/// A write transaction whose `COMMIT` reply was lost did not commit, as a lookup on another connection
/// showed (its identifier is not in the commit table, and no backend runs it any longer): running it again
/// is safe, and retried as work that never reached the server.
struct CommitNotMade: Error, CustomStringConvertible {
    /// The error that lost the reply.
    var lost: any Error
    var description: String { "the transaction did not commit (looked up after the reply was lost: \(lost))" }
}

extension Error {
    /// Whether this is the driver's "the connection broke while `COMMIT` was in flight".
    var isLostCommit: Bool { (self as? LibPQError)?.code == .commitOutcomeUnknown }
}

extension StatementRunner {
    /// ``run(_:)`` in a transaction that writes its commit identifier: the identifier goes with the first
    /// statement (one pipeline, no round trip more), or inside a statement that carries the `COMMIT` along
    /// with the rows it returns; a lost `COMMIT` reply is resolved.
    func runMarked(_ sql: SQL, _ commits: CommitTracking) throws -> QueryResult {
        let marker = commits.marker
        let carriesCommit = connection.commitGoesWithNextStatement
        do {
            if carriesCommit, let carrying = marker.carrying(sql) { return try send(carrying) }
            guard marker.state == .pending else { return try send(sql) }
            // The identifier goes just before, in the same pipeline.
            var result: QueryResult?
            try plainPipelined { emit in
                try emit(marker.insert()) { _ in }
                try emit(sql) { result = $0 }
            }
            guard let result else {
                throw PostgresStoreError(.unexpectedResult, "a pipelined statement returned no result")
            }
            return result
        } catch  where carriesCommit && error.isLostCommit {
            let rows = try commits.resolve(marker)
            connection.adoptResolvedCommit()
            return rows
        }
    }

    /// Sends a pending commit identifier on its own, before a statement that cannot carry it (a COPY,
    /// single-row reads): one round trip more, only when such a statement comes first.
    func sendPendingMarker() throws {
        guard let commits, commits.marker.state == .pending else { return }
        try send(commits.marker.insert())
    }

    /// The statements of a pipeline (``pipelined(_:)``) with the commit identifier: first when still pending;
    /// in a pipeline that carries the `COMMIT`, inside its first statement that returns a table's rows (or
    /// last, when none does). A lost reply is resolved, and the carrying statement's handler handed the rows
    /// read back when it did not run yet.
    func markedPipeline(_ commits: CommitTracking, _ body: (_ emit: @escaping Emit) throws -> Void) throws {
        let marker = commits.marker
        let carries = connection.commitGoesWithNextStatement
        // The handler of the statement that carried the identifier and its rows, until its result arrives.
        final class Carried {
            var done = false
            var handle: ((QueryResult) throws -> Void)?
        }
        let carried = Carried()
        do {
            try plainPipelined { emit in
                if !carries, marker.state == .pending { try emit(marker.insert()) { _ in } }
                try body { sql, handle in
                    guard carries, !carried.done, let carrying = marker.carrying(sql) else {
                        return try emit(sql, handle)
                    }
                    carried.done = true
                    carried.handle = handle
                    try emit(carrying) { result in
                        carried.handle = nil
                        try handle(result)
                    }
                }
                if marker.state == .pending { try emit(marker.insert()) { _ in } }
            }
        } catch  where carries && error.isLostCommit {
            let rows = try commits.resolve(marker)
            connection.adoptResolvedCommit()
            try carried.handle?(rows)
        }
    }
}
