/// The table a store that resolves lost commits (``PostgresStore/Configuration/resolvesCommitOutcomes``) keeps
/// beside the model's, in the same schema, made and checked by the same migration path.
///
/// `_corevalue_commits` holds one row per committed write transaction: the random `id` the store made for it,
/// when it began (`at`), and for a save whose one statement carried the `COMMIT`, that statement's returned
/// rows as JSON (`result`), so that a save whose reply was lost can still hand back its keys and versions. The
/// transaction writes its row itself, so the row exists exactly when the transaction committed.
///
/// The table is made with one more row, the sentinel (the nil UUID, at `-infinity`), which pruning never
/// deletes: a lookup that finds neither its row nor the sentinel knows the table was emptied by hand
/// (`TRUNCATE`), and reports the outcome unknown rather than "not committed".
extension SchemaMapping {
    /// The table of commit identifiers.
    package static let commitTable = "_corevalue_commits"
    /// The sentinel row's identifier (and the `id` column's default, which seeds it).
    package static let commitSentinel = "00000000-0000-0000-0000-000000000000"

    /// The commit table's definition.
    package var commitTableDefinition: TableDefinition {
        TableDefinition(
            name: Self.commitTable,
            columns: [
                ColumnDefinition(
                    name: "id", sqlType: "uuid", isNullable: false,
                    constraints: "DEFAULT '\(Self.commitSentinel)' PRIMARY KEY",
                    defaultLiteral: "'\(Self.commitSentinel)'"),
                ColumnDefinition(
                    name: "at", sqlType: "timestamptz", isNullable: false, constraints: "DEFAULT '-infinity'",
                    defaultLiteral: "'-infinity'"),
                ColumnDefinition(name: "result", sqlType: "jsonb", isNullable: true),
            ],
            // No index on `at`: pruning scans the table every ten minutes, cheaper than an index entry per write.
            tableConstraints: [], foreignKeys: [], indexedColumns: [], isJoinTable: false, seedsRow: true,
            ownKey: "id")
    }

    /// Whether `table` is one the store keeps beside the model's (history, commit identifiers), which a
    /// schema may hold while the store does not use it: never reported as a table the model lacks.
    package static func isStoreTable(_ table: String) -> Bool {
        isHistoryTable(table) || table == commitTable
    }
}
