/// The tables a store that records history keeps beside the model's, in the same schema, made and checked
/// by the same migration path (`Migrator.migrate(model:recordsHistory:)`, the schema check when a store opens).
///
/// `_corevalue_history` holds one row per committed save: its number (`"_pk"`, taken by the save's last
/// statement), the transaction's ID (`xid8`, for reading by snapshots), when it was recorded, its author and
/// name, and its changes: a kind letter each (`kinds`), and entity, primary key, version after the change
/// and property list each in run-length form (``HistoryRuns``), plus the tombstones of its deletes as JSON.
/// Entities and property lists are stored once per transaction (`entities`, `properties`: names joined by
/// commas) and referred to by position (`entity_runs`, `property_runs`), so that a bulk save of 10,000 rows
/// of one entity records two strings and a few numbers besides its 10,000 kind letters. `_corevalue_history_state` holds one row: the
/// history's random identifier (tokens name it) and the snapshot up to which history was deleted.
extension SchemaMapping {
    /// The table of recorded transactions.
    package static let historyTable = "_corevalue_history"
    /// The one-row table of the history's identifier and pruning point.
    package static let historyStateTable = "_corevalue_history_state"

    /// The two history tables.
    package var historyTables: [TableDefinition] {
        let key = ColumnDefinition(
            name: Self.primaryKeyColumn, sqlType: "bigint", isNullable: false,
            constraints: "GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
        func column(_ name: String, _ type: String, optional: Bool = false, default value: String? = nil)
            -> ColumnDefinition
        {
            ColumnDefinition(
                name: name, sqlType: type, isNullable: optional, constraints: value.map { "DEFAULT " + $0 } ?? "",
                collation: type == "text" ? Self.textCollation : nil, defaultLiteral: value)
        }
        let history = TableDefinition(
            name: Self.historyTable,
            columns: [
                key, column("xid", "xid8", default: "pg_current_xact_id()"),
                column("committed_at", "timestamptz", default: "clock_timestamp()"),
                column("author", "text", optional: true), column("name", "text", optional: true),
                column("entities", "text[]"), column("properties", "text[]"), column("kinds", "text"),
                column("entity_runs", "integer[]"), column("key_ranges", "bigint[]"),
                column("version_runs", "bigint[]"),
                column("property_runs", "integer[]"), column("tombstones", "text", optional: true),
            ],
            tableConstraints: [], foreignKeys: [], indexedColumns: ["xid"], isJoinTable: false)
        let state = TableDefinition(
            name: Self.historyStateTable,
            columns: [
                key, column("store_id", "uuid", default: "gen_random_uuid()"), column("pruned", "text", optional: true),
            ],
            tableConstraints: [], foreignKeys: [], indexedColumns: [], isJoinTable: false, seedsRow: true)
        return [history, state]
    }

    /// Whether `table` is one of the history tables, which a schema without history may hold (history was
    /// on once): never reported as a table the model lacks.
    package static func isHistoryTable(_ table: String) -> Bool {
        table == historyTable || table == historyStateTable
    }
}
