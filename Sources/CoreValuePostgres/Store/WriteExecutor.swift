@_spi(StoreImplementation) import CoreValue
import LibPQ

/// How one write transaction's statements go to the server: the store chooses it (a streamed save per
/// attempt, after its probe), ``WriteExecutor`` carries it out. The flow of every save is
/// struct → change set → ``SavePlan`` → strategy → executor → connection.
enum WriteStrategy {
    /// One change set (a context's save): inserts and upserts, then foreign keys to rows inserted later,
    /// then updates, member lists and deletes in one pipeline (``SaveExecution/run()``).
    case statements(SavePlan, ChangeSet)
    /// A streamed save's parts, each part's inserts pipelined as soon as it is handed over; with
    /// `insertingNew`, upserts go as plain inserts (the probe found no row that could share an identifier).
    case pipelinedParts(PartSource, insertingNew: Bool)
    /// A streamed save of new rows of one entity without foreign keys: keys reserved in one statement,
    /// then every part's rows in one binary COPY.
    case copy(PartSource, StreamedUpserts, Entity)
    /// One statement that writes every row a predicate matches (a batch update), returning `"_pk"` and
    /// `"_version"` of each when `listsRows` (asked for, or for the change notification).
    /// `assigned` names the attributes it sets (history records them).
    case batch(SQL, entity: String, listsRows: Bool, assigned: [String])
    /// A batch delete in one statement, after its `deny` checks.
    case batchDelete(BatchDeletion)
}

/// What a transaction wrote, and what its change notification tells other processes.
struct WriteOutcome {
    var result: SaveResult
    /// The changes as notified: the change set, or a streamed save's parts' inserts.
    var notified: ChangeSet
    /// Whether `result` records inserts by stream position (a streamed save).
    var isStreamed: Bool
    /// For a batch: how many rows its statement wrote.
    var batchCount = 0

    /// The result as the notification reports it: keyed by ID, also for a streamed save.
    var notifiedResult: SaveResult { isStreamed ? result.tabulated(streamed: notified.inserts) : result }
}

/// Carries out a ``WriteStrategy`` in the transaction its runner is in. Every write of the store goes
/// through ``execute(_:)``; any failure throws, and the caller's transaction rolls back.
struct WriteExecutor {
    let runner: StatementRunner
    let statements: WriteStatements
    /// Whether a change notification or a history record follows the strategy's statements (so the
    /// `COMMIT` cannot go with them).
    var notifies = false

    func execute(_ strategy: WriteStrategy) throws -> WriteOutcome {
        switch strategy {
        case .statements(let plan, let changes):
            let result = try SaveExecution(plan: plan, statements: statements, runner: runner)
                .run(mayCommitWithLastStatement: !notifies)
            return WriteOutcome(result: result, notified: changes, isStreamed: false)
        case .pipelinedParts(let source, let insertingNew):
            var notified = ChangeSet()
            let result = try pipelineParts(source, insertingNew: insertingNew, notified: &notified)
            return WriteOutcome(result: result, notified: notified, isStreamed: true)
        case .copy(let source, let upserts, let entity):
            var notified = ChangeSet()
            let result = try copyParts(source, upserts, entity, notified: &notified)
            return WriteOutcome(result: result, notified: notified, isStreamed: true)
        case .batch(let sql, let entity, let listsRows, let assigned):
            let written = try runner.run(sql)
            guard listsRows else {
                return WriteOutcome(
                    result: SaveResult(), notified: ChangeSet(), isStreamed: false, batchCount: written.affectedRows)
            }
            var result = SaveResult()
            var notified = ChangeSet()
            let names = AttributeValues(Dictionary(uniqueKeysWithValues: assigned.map { ($0, AttributeValue.null) }))
            for row in 0..<written.rowCount {
                let id = ManagedObjectID.permanent(entity, try written.decode(Int64.self, row: row, column: 0))
                result.versions[id] = try written.decode(Int64.self, row: row, column: 1)
                notified.updates.append(ObjectChange(id: id, attributes: names))
            }
            return WriteOutcome(result: result, notified: notified, isStreamed: false, batchCount: written.rowCount)
        case .batchDelete(let deletion):
            return try batchDelete(deletion)
        }
    }

    /// A batch delete: each `deny` check, then the statement; the rows it deleted, of every entity, are what
    /// its notification lists.
    private func batchDelete(_ deletion: BatchDeletion) throws -> WriteOutcome {
        for check in deletion.denyChecks where try runner.run(check.sql).rowCount > 0 {
            throw CVManagedStructError.constraintViolation(
                entity: check.entity, key: check.relationship,
                message: "delete rule deny: a row the batch matches still has related objects")
        }
        let deleted = try runner.run(deletion.delete)
        guard deletion.listsRows else {
            let count =
                deleted.rowCount == 1 ? Int(try deleted.decode(Int64.self, row: 0, column: 0)) : deleted.affectedRows
            return WriteOutcome(result: SaveResult(), notified: ChangeSet(), isStreamed: false, batchCount: count)
        }
        var notified = ChangeSet()
        var count = 0
        for row in 0..<deleted.rowCount {
            let ordinal = Int(try deleted.decode(Int64.self, row: row, column: 0))
            guard ordinal < deletion.entities.count else { continue }
            if ordinal == 0 { count += 1 }
            let id = ManagedObjectID.permanent(
                deletion.entities[ordinal], try deleted.decode(Int64.self, row: row, column: 1))
            notified.deletes.append(ObjectDeletion(id: id, version: nil))
        }
        return WriteOutcome(result: SaveResult(), notified: notified, isStreamed: false, batchCount: count)
    }

    /// The parts of a streamed save, pipelined: one round trip for all of them.
    private func pipelineParts(_ source: PartSource, insertingNew: Bool, notified: inout ChangeSet) throws
        -> SaveResult
    {
        let recorder = SaveExecution.Recorder()
        // The stream position of the next part's first insert: results are recorded by position.
        var position = 0
        // Each result is handled as it arrives and released: the pipeline never holds them all.
        try runner.pipelined { emit in
            try source.take(notified: &notified) { _, plan in
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

    /// The parts of a stream of new rows in one binary COPY: their keys reserved first (one statement), then
    /// each part's rows encoded and handed to the server as soon as the part comes, so that the server
    /// copies one part while the caller prepares the next. Each row gets the next reserved key and the
    /// first version.
    ///
    /// - Throws: `CVManagedStructError.invalidObject` for a part with anything but inserts of
    ///   `upserts.entityName`, or with more rows than `upserts.count`.
    private func copyParts(
        _ source: PartSource, _ upserts: StreamedUpserts, _ entity: Entity, notified: inout ChangeSet
    ) throws -> SaveResult {
        let keys = try reserveKeys(entity, count: upserts.count)
        var rows = CopyRows(entity: entity, keys: keys)
        let copySQL = statements.copyNew(into: entity.name, attributes: entity.attributes)
        let copied = try runner.copyIn(copySQL) { write in
            try source.take(notified: &notified) { changes, plan in
                try write(rows.encode(plan, insertCount: changes.inserts.count, upserts: upserts))
            }
        }
        guard copied == rows.written else {
            throw PostgresStoreError(.unexpectedResult, "COPY wrote \(copied) \(entity.name) rows of \(rows.written)")
        }
        return rows.result
    }

    /// `count` keys from the identity sequence of `entity`'s table, in one statement.
    private func reserveKeys(_ entity: Entity, count: Int) throws -> [Int64] {
        let reserved = try runner.run(statements.reserveKeys(table: entity.name, count: count))
        // NULLs when the table's key column has no sequence (a table not made by this library's DDL).
        guard let keys = try? reserved.decode([Int64].self, row: 0, column: 0) else {
            throw PostgresStoreError(
                .schemaMismatch,
                "the \(SchemaMapping.primaryKeyColumn) column of \(entity.name) has no identity sequence to take keys "
                    + "from; make it GENERATED ALWAYS AS IDENTITY, or set writesThroughCopy = false")
        }
        guard keys.count == count else {
            throw PostgresStoreError(.unexpectedResult, "reserved \(keys.count) keys of \(count) for \(entity.name)")
        }
        return keys
    }
}

/// A streamed save's producer, as ``WriteExecutor`` takes its parts: each part checked against the model and
/// planned when it is handed over, and never kept once sent (a retry has `produce` hand the parts over again).
struct PartSource {
    let produce: (_ send: (ChangeSet) throws -> Void) throws -> Void
    let index: ModelIndex
    let mapping: SchemaMapping
    /// Whether the parts' inserts are collected for a change notification or the history.
    let notifies: Bool

    /// Calls `produce` and hands each part, checked against the model and planned, to `send`; with
    /// ``notifies``, the part's inserts are added to `notified` too.
    ///
    /// A lost connection must not stop `produce` half way (its caller's work would be left half done): once
    /// `send` throws an error that may be retried, the later parts are still checked but not sent, and the
    /// error is thrown when `produce` returns.
    func take(notified: inout ChangeSet, _ send: (ChangeSet, SavePlan) throws -> Void) throws {
        var lost: (any Error)?
        // `send` runs only inside `produce`'s calls, never after it returns.
        try withoutActuallyEscaping(send) { send in
            try produce { changes in
                guard !changes.isEmpty else { return }
                let resolved = try changes.resolved(against: index, rules: SavePlan.valueRules)
                let changes = resolved.changes
                let plan = SavePlan(mapping: mapping, changes: resolved)
                // The one check of the parts' shape, for both routes (pipelined inserts and COPY).
                guard plan.updates.isEmpty, plan.links.isEmpty, plan.deletes.isEmpty else {
                    throw CVManagedStructError.invalidObject(
                        message:
                            "a part of a streamed save may only insert rows; it has updates, deletes or member lists"
                    )
                }
                if notifies {
                    notified.inserts += changes.inserts
                    notified.transactionAuthor = notified.transactionAuthor ?? changes.transactionAuthor
                    notified.transactionName = notified.transactionName ?? changes.transactionName
                }
                guard lost == nil else { return }
                do {
                    try send(changes, plan)
                } catch {
                    guard PostgresStore.retryReason(error) != nil else { throw error }
                    lost = error
                }
            }
        }
        if let lost { throw lost }
    }
}
