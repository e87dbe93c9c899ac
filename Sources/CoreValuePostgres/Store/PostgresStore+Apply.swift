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
    /// again (see ``Store/apply(upserts:streaming:)``); an error from `produce` itself is never retried.
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
        if let upserts, case .string(let text) = upserts.lowest {
            try ValueCoercion.checkText(text, entity: upserts.entityName, key: upserts.key)
        }
        // Plain inserts are tried until an attempt finds one of its identifiers taken.
        var mayInsertNew = key != nil
        return try withRetries {
            var insertedNew = false
            do {
                return try withRunner { runner in
                    try runner.transaction { runner in
                        if mayInsertNew, let upserts, let key {
                            let probe = writeStatements.anyRow(in: upserts.entityName, key: key, from: upserts.lowest)
                            insertedNew = try runner.run(probe).rowCount == 0
                        }
                        // The parts' own changes, only for the notification (each part's plan holds its rows
                        // only until they are sent: a retry has `produce` hand the parts over again).
                        var notified = ChangeSet()
                        let saved =
                            if insertedNew, let upserts, try copies(upserts) {
                                try copyParts(produce, upserts, runner, notified: &notified)
                            } else {
                                try applyParts(produce, insertingNew: insertedNew, runner, notified: &notified)
                            }
                        if let channel = notificationChannel {
                            try Self.notify(channel, notified, saved.tabulated(streamed: notified.inserts), runner)
                        }
                        return saved
                    }
                }
            } catch let error as DatabaseError
                where insertedNew && error.sqlState == .uniqueViolation && error.tableName == upserts?.entityName
            {
                mayInsertNew = false
                throw StreamedInsertCollision(error: error)
            }
        }
    }

    /// Whether a stream of new rows goes through binary COPY (``Configuration/writesThroughCopy``).
    private func copies(_ upserts: StreamedUpserts) throws -> Bool {
        guard configuration.writesThroughCopy, configuration.verifySchema, upserts.count > 0 else { return false }
        let entity = try index.entity(upserts.entityName).entity
        return mapping.foreignKeyRelationships(of: entity).isEmpty && entity.attributes.count + 2 <= Int(Int16.max)
    }

    /// Calls `produce` and hands each part, checked against the model and planned, to `send`; with a
    /// notification channel, the part's inserts are added to `notified` too.
    ///
    /// A lost connection must not stop `produce` half way (its caller's work would be left half done): once
    /// `send` throws an error that may be retried, the later parts are still checked but not sent, and the
    /// error is thrown when `produce` returns.
    private func takeParts(
        _ produce: (_ send: (ChangeSet) throws -> Void) throws -> Void, notified: inout ChangeSet,
        _ send: (ChangeSet, SavePlan) throws -> Void
    ) throws {
        let notifies = notificationChannel != nil
        var lost: (any Error)?
        // `send` runs only inside `produce`'s calls, never after it returns.
        try withoutActuallyEscaping(send) { send in
            try produce { changes in
                guard !changes.isEmpty else { return }
                try changes.validate(against: index)
                let plan = try SavePlan(mapping: mapping, changes: changes, index: index)
                if notifies { notified.inserts += changes.inserts }
                guard lost == nil else { return }
                do {
                    try send(changes, plan)
                } catch {
                    guard Self.retryReason(error) != nil else { throw error }
                    lost = error
                }
            }
        }
        if let lost { throw lost }
    }

    /// The parts of a stream of new rows, in one binary COPY in the transaction `runner` is in: their keys
    /// reserved first (one statement), then each part's rows encoded and handed to the server as soon as the
    /// part comes, so that the server copies one part while the caller prepares the next. Each row gets the
    /// next reserved key and the first version.
    ///
    /// - Throws: As ``apply(upserts:streaming:)``; `CVManagedStructError.invalidObject` for a part with
    ///   anything but inserts of `upserts.entityName`, or with more rows than `upserts.count`.
    private func copyParts(
        _ produce: (_ send: (ChangeSet) throws -> Void) throws -> Void, _ upserts: StreamedUpserts,
        _ runner: StatementRunner, notified: inout ChangeSet
    ) throws -> SaveResult {
        let statements = writeStatements
        let entity = try index.entity(upserts.entityName).entity
        let reserved = try runner.run(statements.reserveKeys(table: entity.name, count: upserts.count))
        // NULLs when the table's key column has no sequence (a table not made by this library's DDL).
        guard let keys = try? reserved.decode([Int64].self, row: 0, column: 0) else {
            throw PostgresStoreError(
                .schemaMismatch,
                "the \(SchemaMapping.primaryKeyColumn) column of \(entity.name) has no identity sequence to take keys "
                    + "from; make it GENERATED ALWAYS AS IDENTITY, or set writesThroughCopy = false")
        }
        guard keys.count == upserts.count else {
            throw PostgresStoreError(
                .unexpectedResult, "reserved \(keys.count) keys of \(upserts.count) for \(entity.name)")
        }
        var result = SaveResult()
        // Rows encoded so far: the next reserved key's index, and the next stream position.
        var written = 0
        let fieldCount = Int16(entity.attributes.count + 2)
        var buffer: [UInt8] = []
        let copySQL = statements.copyNew(into: entity.name, attributes: entity.attributes)
        let copied = try runner.copyIn(copySQL) { writer in
            try takeParts(produce, notified: &notified) { changes, plan in
                guard plan.updates.isEmpty, plan.links.isEmpty, plan.deletes.isEmpty else {
                    throw CVManagedStructError.invalidObject(
                        message:
                            "a part of a streamed save may only insert rows; it has updates, deletes or member lists")
                }
                // One group in the order handed over: recorded by stream position, as `sendInserts` does.
                let positional = plan.inserts.count == 1 && plan.insertCount == changes.inserts.count
                result.streamedInserts.append(contentsOf: repeatElement(nil, count: plan.insertCount))
                buffer.removeAll(keepingCapacity: true)
                for group in plan.inserts {
                    guard group.entity.name == entity.name, group.upsertKey.map({ $0.name == upserts.key }) ?? true
                    else {
                        throw CVManagedStructError.invalidObject(
                            message: "a streamed save announced upserts of \(entity.name) by '\(upserts.key)'; a part "
                                + "inserts \(group.entity.name) rows by '\(group.upsertKey?.name ?? "none")'")
                    }
                    for row in group.rows {
                        guard written < keys.count else {
                            throw CVManagedStructError.invalidObject(
                                message: "a streamed save announced at most \(upserts.count) rows; its parts hold more")
                        }
                        let key = keys[written]
                        ArrayEncoding.appendFieldCount(fieldCount, to: &buffer)
                        try ArrayEncoding.appendElement(.int64(key), as: .int64, to: &buffer)
                        try ArrayEncoding.appendElement(.int64(1), as: .int64, to: &buffer)
                        for (position, attribute) in entity.attributes.enumerated() {
                            let value = row.attributes[at: position] ?? attribute.defaultValue ?? .null
                            try ArrayEncoding.appendElement(value, as: attribute.type, to: &buffer)
                        }
                        if positional {
                            result.streamedInserts[written] = SaveResult.StoredRow(primaryKey: key, version: 1)
                        } else {
                            let permanent = ManagedObjectID.permanent(entity.name, key)
                            result.permanentIDs[row.id] = permanent
                            result.versions[permanent] = 1
                        }
                        written += 1
                    }
                }
                try writer.write(buffer)
            }
        }
        guard copied == written else {
            throw PostgresStoreError(.unexpectedResult, "COPY wrote \(copied) \(entity.name) rows of \(written)")
        }
        return result
    }

    /// The parts of a streamed save, pipelined in the transaction `runner` is in.
    private func applyParts(
        _ produce: (_ send: (ChangeSet) throws -> Void) throws -> Void, insertingNew: Bool, _ runner: StatementRunner,
        notified: inout ChangeSet
    ) throws -> SaveResult {
        let statements = writeStatements
        let recorder = SaveExecution.Recorder()
        // The stream position of the next part's first insert: results are recorded by position.
        var position = 0
        // Each result is handled as it arrives and released: the pipeline never holds them all.
        try runner.pipelined { emit in
            try takeParts(produce, notified: &notified) { _, plan in
                let start = position
                position += plan.insertCount
                try SaveExecution(
                    plan: plan, statements: statements, runner: runner, recorder: recorder, insertsNew: insertingNew
                )
                .sendInserts(emit, at: start)
            }
        }
        return recorder.result
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
