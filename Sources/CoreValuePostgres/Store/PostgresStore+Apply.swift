@_spi(StoreImplementation) import CoreValue
import LibPQ

extension PostgresStore {
    /// Applies a change set in one transaction: everything or nothing.
    ///
    /// The change set is checked against the model before anything is sent. Then, in one transaction: one
    /// `INSERT` per entity (one `INSERT ... ON CONFLICT` per entity and identifier for unique entities), one
    /// `UPDATE` per entity and relationship for foreign keys to rows inserted later in the save, one `UPDATE`
    /// per entity (checked against the versions read), two statements per owning to-many relationship changed
    /// (remove dropped links, add or move the others), one `DELETE` per entity, and with a
    /// ``notificationChannel`` one `pg_notify`. A serialization failure or
    /// deadlock repeats the whole transaction (up to ``maxAttempts``).
    ///
    /// - Throws: ``PostgresStoreError/Code/readOnlyStore`` for a read-only store, before anything is sent;
    ///   `CVManagedStructError.conflict` when an update or delete finds a newer version or no row;
    ///   `CVManagedStructError` for keys, types and missing values; ``PostgresStoreError`` for a NUL character;
    ///   `DatabaseError` for constraint violations; the driver's `LibPQError(.commitOutcomeUnknown)` when the
    ///   connection broke during `COMMIT`. Nothing was changed unless the outcome is unknown.
    @_spi(StoreImplementation) public func apply(_ changes: ChangeSet) throws -> SaveResult {
        guard !changes.isEmpty else { return SaveResult() }
        try requireWritable()
        try changes.validate(against: index)
        let plan = try SavePlan(mapping: mapping, changes: changes, index: index)
        let statements = writeStatements
        let channel = notificationChannel
        return try withRetries {
            try withRunner { runner in
                try runner.transaction { runner in
                    let execution = SaveExecution(plan: plan, statements: statements, runner: runner)
                    let result = try execution.run()
                    if let channel { try Self.notify(channel, changes, result, runner) }
                    return result
                }
            }
        }
    }

    /// Applies a change set handed over in parts (a bulk `saveAll`), in one transaction, with the parts'
    /// statements pipelined: each part's inserts go to the server as soon as `produce` hands the part over,
    /// so the server writes one part while the caller prepares the next. One round trip for all the parts
    /// (plus `BEGIN` and `COMMIT`), whatever their number.
    ///
    /// Each part is checked against the model when it is handed over. Parts may only insert rows (upserts
    /// included) of entities whose rows have no foreign keys. No part is kept once sent: a retry
    /// (serialization failure, deadlock, failover) calls `produce` again, which hands the same parts over
    /// again (see ``Store/apply(streaming:)``); an error from `produce` itself is never retried.
    ///
    /// - Throws: As ``apply(_:)``; what `produce` throws; `CVManagedStructError.invalidObject` for a part
    ///   that does more than insert.
    @_spi(StoreImplementation) public func apply(
        streaming produce: (_ send: (ChangeSet) throws -> Void) throws -> Void
    ) throws -> SaveResult {
        try requireWritable()
        let statements = writeStatements
        let channel = notificationChannel
        return try withRetries {
            try withRunner { runner in
                try runner.transaction { runner in
                    let recorder = SaveExecution.Recorder()
                    // The stream position of the next part's first insert: results are recorded by position.
                    var position = 0
                    // The parts' own changes, only for the notification (each part's plan holds its rows only
                    // until they are sent: a retry has `produce` hand the parts over again).
                    var notified = ChangeSet()
                    // Each result is handled as it arrives and released: the pipeline never holds them all.
                    try runner.pipelined { emit in
                        // A lost connection must not stop `produce` half way (its caller's work would be left
                        // half done): the parts are still taken, and the error is thrown once it returns.
                        var lost: (any Error)?
                        try produce { changes in
                            guard !changes.isEmpty else { return }
                            try changes.validate(against: index)
                            let plan = try SavePlan(mapping: mapping, changes: changes, index: index)
                            if channel != nil { notified.inserts += changes.inserts }
                            guard lost == nil else { return }
                            do {
                                let start = position
                                position += plan.insertCount
                                try SaveExecution(
                                    plan: plan, statements: statements, runner: runner, recorder: recorder
                                )
                                .sendInserts(emit, at: start)
                            } catch {
                                guard Self.retryReason(error) != nil else { throw error }
                                lost = error
                            }
                        }
                        if let lost { throw lost }
                    }
                    let saved = recorder.result
                    if let channel {
                        try Self.notify(channel, notified, saved.tabulated(streamed: notified.inserts), runner)
                    }
                    return saved
                }
            }
        }
    }

    /// Throws ``PostgresStoreError/Code/readOnlyStore`` for a store opened read-only, before anything is sent.
    private func requireWritable() throws {
        guard !isReadOnly else {
            throw PostgresStoreError(
                .readOnlyStore, "this store was opened read-only (readOnly: true); save through a writable store")
        }
    }

    /// Sends a save's change notification, inside its transaction: PostgreSQL delivers it on commit only,
    /// never for a rollback.
    private static func notify(_ channel: String, _ changes: ChangeSet, _ result: SaveResult, _ runner: StatementRunner)
        throws
    {
        let payload = ChangePayload(changes: changes, result: result).encoded()
        try runner.run("SELECT pg_notify(\(bind: .text(channel)), \(bind: .text(payload)))")
    }
}
