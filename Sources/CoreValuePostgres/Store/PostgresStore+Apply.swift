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
    ///   ``PostgresStoreError/Code/serverError`` for constraint violations (the server's `DatabaseError` as its
    ///   `underlying`); ``PostgresStoreError/Code/commitOutcomeUnknown`` when the connection broke during
    ///   `COMMIT`. Nothing was changed unless the outcome is unknown.
    @_spi(StoreImplementation) public func apply(_ changes: ChangeSet) throws -> SaveResult {
        guard !changes.isEmpty else { return SaveResult() }
        try requireWritable()
        let resolved = try changes.resolved(against: index, rules: SavePlan.valueRules)
        let plan = SavePlan(mapping: mapping, changes: resolved)
        return try write { _ in .statements(plan, resolved.changes) }.result
    }

    /// Applies a change set handed over in parts (a bulk `saveAll`), in one transaction, with the parts'
    /// statements pipelined: each part's inserts go to the server as soon as `produce` hands the part over,
    /// so the server writes one part while the caller prepares the next. One round trip for all the parts
    /// (plus `BEGIN` and `COMMIT`), whatever their number.
    ///
    /// Each part is checked against the model when it is handed over. Parts may only insert rows (upserts
    /// included) of entities whose rows have no foreign keys. No part is kept once sent: a retry
    /// (serialization failure, deadlock, failover) calls `produce` again, which hands the same parts over
    /// again (see `StoreRefinements.apply(upserts:streaming:)`); an error from `produce` itself is never retried.
    ///
    /// With `upserts`, one statement first asks whether a stored row has an identifier of `upserts.lowest` or
    /// above. When none has (a bulk load of new rows), the parts' upserts are sent as plain inserts, without
    /// `ON CONFLICT`'s speculative insertion per row (a quarter of the server's time for new rows). Should
    /// another writer take one of the identifiers meanwhile, that insert fails with a unique violation, the
    /// transaction rolls back, and it is run again with upserts: the same result as upserting from the start
    /// (counted in ``StoreStatistics/retries``).
    ///
    /// - Throws: As ``apply(_:)``; what `produce` throws; `CVManagedStructError.invalidObject` for a part
    ///   that does more than insert, and `CVManagedStructError` for `upserts` naming no unique attribute.
    @_spi(StoreImplementation) public func apply(
        upserts: StreamedUpserts?, streaming produce: (_ send: (ChangeSet) throws -> Void) throws -> Void
    ) throws -> SaveResult {
        try requireWritable()
        let key = try upserts.map { upserts -> Attribute in
            guard let attribute = try index.entity(upserts.entityName).attributes[upserts.key] else {
                throw CVManagedStructError.unknownKey(entity: upserts.entityName, key: upserts.key)
            }
            guard attribute.isUnique else {
                throw CVManagedStructError.invalidObject(
                    message: "a streamed save upserts by a unique attribute; '\(upserts.entityName).\(upserts.key)' "
                        + "is not unique")
            }
            return attribute
        }
        // Refused as a part's value would be, before the probe sends it.
        if let upserts { try ValueCoercion.checkStorable(upserts.lowest, entity: upserts.entityName, key: upserts.key) }
        // Plain inserts are tried until an attempt finds one of its identifiers taken.
        var mayInsertNew = key != nil
        return try withoutActuallyEscaping(produce) { produce in
            let source = PartSource(
                produce: produce, index: index, mapping: mapping, notifies: writesAfterChanges)
            var insertedNew = false
            // An identifier taken meanwhile by another writer: run again with upserts.
            func collision(_ error: any Error) -> any Error {
                guard insertedNew, let error = error as? DatabaseError, error.sqlState == .uniqueViolation,
                    error.tableName == upserts?.entityName
                else { return error }
                mayInsertNew = false
                return StreamedInsertCollision(error: error)
            }
            return try write(mapError: collision) { runner in
                insertedNew = false
                guard mayInsertNew, let upserts, let key else { return .pipelinedParts(source, insertingNew: false) }
                let probe = writeStatements.anyRow(in: upserts.entityName, key: key, from: upserts.lowest)
                insertedNew = try runner.run(probe).rowCount == 0
                if insertedNew, let entity = try copiedEntity(upserts) { return .copy(source, upserts, entity) }
                return .pipelinedParts(source, insertingNew: insertedNew)
            }.result
        }
    }

    /// The one route of every write: in one transaction, retried as ``withRetries(mayRetry:_:)`` says,
    /// `choose` picks the strategy (it may send statements first, as a streamed save's probe does), the
    /// executor carries it out, then with ``Configuration/recordsHistory`` the history record (after the
    /// tombstones of the deletes were read) and with a ``notificationChannel`` the change notification. An
    /// attempt's error passes through `mapError` before the retry loop sees it.
    func write(
        attribution: HistoryAttribution = HistoryAttribution(), mapError: (any Error) -> any Error = { $0 },
        _ choose: (StatementRunner) throws -> WriteStrategy
    ) throws -> WriteOutcome {
        // Earlier attempts whose connection was lost mid-transaction: their backends are ended first.
        var abandoned: [AbandonedAttempt] = []
        return try withRetries {
            do {
                return try withRunner { plain in
                    try endAbandoned(&abandoned, on: plain)
                    // A new identifier per attempt: a retried attempt's row is its own.
                    let runner = plain.withCommits(commitTracking(on: plain.connection))
                    let attempt =
                        runner.commits?.marker.abandoned ?? AbandonedAttempt(backend: runner.connection.backendIdentity)
                    let outcome: WriteOutcome
                    do {
                        outcome = try runner.transaction { try writeTransaction($0, attribution, choose) }
                    } catch let error where Self.lostMidTransaction(error) {
                        abandoned.append(attempt)
                        throw error
                    }
                    pruneCommitsIfDue(runner)
                    return outcome
                }
            } catch {
                throw mapError(error)
            }
        }
    }

    /// One attempt of ``write(attribution:mapError:_:)``'s transaction.
    private func writeTransaction(
        _ runner: StatementRunner, _ attribution: HistoryAttribution,
        _ choose: (StatementRunner) throws -> WriteStrategy
    ) throws -> WriteOutcome {
        let executor = WriteExecutor(runner: runner, statements: writeStatements, notifies: writesAfterChanges)
        let strategy = try choose(runner)
        let tombstones = recordsHistory ? try tombstones(for: strategy, runner) : [:]
        let outcome = try executor.execute(strategy)
        // The history record and the notification need no check of their results: the last of them carries
        // the `COMMIT` (one round trip fewer).
        let last = [
            recordsHistory ? historyRecord(outcome, tombstones: tombstones, attribution: attribution) : nil,
            notificationChannel.map { Self.notification($0, outcome.notified, outcome.notifiedResult) },
        ].compactMap { $0 }
        for (position, statement) in last.enumerated() {
            if position == last.count - 1 { runner.commitWithNextStatement() }
            try runner.run(statement)
        }
        return outcome
    }

    /// The entity whose new rows a stream writes through binary COPY (``Configuration/writesThroughCopy``),
    /// or `nil` when they go as inserts.
    private func copiedEntity(_ upserts: StreamedUpserts) throws -> Entity? {
        guard configuration.writesThroughCopy, configuration.verifySchema, upserts.count > 0 else { return nil }
        let entity = try index.entity(upserts.entityName).entity
        // A hierarchy's rows also name their entity: they go as inserts, which write that column.
        let fits =
            mapping.foreignKeyRelationships(of: entity).isEmpty && entity.attributes.count + 2 <= Int(Int16.max)
            && !mapping.isHierarchical(entity.name)
        return fits ? entity : nil
    }

    /// Throws ``PostgresStoreError/Code/readOnlyStore`` for a store opened read-only, before anything is sent.
    func requireWritable() throws {
        guard !isReadOnly else {
            throw PostgresStoreError(
                .readOnlyStore, "this store was opened read-only (readOnly: true); save through a writable store")
        }
    }

    /// A save's change notification, sent inside its transaction: PostgreSQL delivers it on commit only,
    /// never for a rollback.
    private static func notification(_ channel: String, _ changes: ChangeSet, _ result: SaveResult) -> SQL {
        let payload = ChangePayload(changes: changes, result: result).encoded()
        return "SELECT pg_notify(\(bind: .text(channel)), \(bind: .text(payload)))"
    }
}
