@_spi(StoreImplementation) import CoreValue

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
        guard !isReadOnly else {
            throw PostgresStoreError(
                .readOnlyStore, "this store was opened read-only (readOnly: true); save through a writable store")
        }
        try changes.validate(against: index)
        let plan = try SavePlan(mapping: mapping, changes: changes, index: index)
        let statements = writeStatements
        let channel = notificationChannel
        return try withRetries {
            try withRunner { runner in
                try runner.transaction { runner in
                    var execution = SaveExecution(plan: plan, statements: statements, runner: runner)
                    let result = try execution.run()
                    if let channel {
                        // Inside the transaction: PostgreSQL delivers it on commit only, never for a rollback.
                        let payload = ChangePayload(changes: changes, result: result).encoded()
                        try runner.run("SELECT pg_notify(\(bind: .text(channel)), \(bind: .text(payload)))")
                    }
                    return result
                }
            }
        }
    }
}
