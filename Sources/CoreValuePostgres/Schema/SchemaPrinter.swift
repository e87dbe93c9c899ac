@_spi(StoreImplementation) import CoreValue

/// Prints the DDL that creates a model's tables: what `corevalue schema` shows and a first migration holds.
///
/// The output is deterministic: entity tables in model order, then join tables, then foreign keys, then
/// indexes. Foreign keys between entity tables are added with `ALTER TABLE` so cycles need no ordering.
public struct SchemaPrinter: Sendable {
    /// The mapping to print.
    package let mapping: SchemaMapping
    /// The schema to qualify table names with; `nil` leaves them unqualified (for migration files, which the
    /// migrator runs with the target schema on the search path).
    public let schema: String?

    /// Creates a printer for a model; with `recordsHistory`, for a store that records history (the history
    /// tables are printed too).
    public init(model: ManagedObjectModel, schema: String? = nil, recordsHistory: Bool = false) {
        self.init(mapping: SchemaMapping(model: model, recordsHistory: recordsHistory), schema: schema)
    }

    /// Creates a printer for a mapping.
    package init(mapping: SchemaMapping, schema: String?) {
        self.mapping = mapping
        self.schema = schema
    }

    /// The DDL, one statement per paragraph, ending in a newline.
    public var ddl: String {
        let tables = mapping.tables
        var statements = tables.map(createTable)
        for table in tables {
            for key in table.foreignKeys where !isInline(key, of: table) {
                statements.append(addForeignKey(key, to: table.name))
            }
        }
        for table in tables {
            for column in table.indexedColumns { statements.append(createIndex(on: table.name, column)) }
        }
        return statements.joined(separator: "\n\n") + "\n"
    }

    /// The `GRANT`s an application role needs to use the model's tables, and nothing else: `USAGE` on the
    /// schema, `SELECT, INSERT, UPDATE, DELETE` on each table (join tables included), and `USAGE` on the
    /// schema's sequences (the bulk `COPY` path reserves keys from the tables' identity sequences). With
    /// `readOnly`, `USAGE` on the schema and `SELECT` on each table (a read-only store, a standby). Locks,
    /// `LISTEN` and `NOTIFY` need no right. Run them as the owner (the role that migrates); the application
    /// role cannot create, alter or drop anything. ``schema`` should be set: without it the schema grants are
    /// left out and table names are unqualified (the search path's).
    public func grants(to role: String, readOnly: Bool = false) -> String {
        let grantee = SQLIdentifier(role).quoted
        let tables = mapping.tables.map { name($0.name) }.joined(separator: ", ")
        var statements: [String] = []
        if let schema { statements.append("GRANT USAGE ON SCHEMA \(SQLIdentifier(schema).quoted) TO \(grantee);") }
        statements.append(
            "GRANT \(readOnly ? "SELECT" : "SELECT, INSERT, UPDATE, DELETE") ON TABLE \(tables) TO \(grantee);")
        if !readOnly, let schema {
            statements.append("GRANT USAGE ON ALL SEQUENCES IN SCHEMA \(SQLIdentifier(schema).quoted) TO \(grantee);")
        }
        return statements.joined(separator: "\n") + "\n"
    }

    /// `ALTER TABLE ... ADD FOREIGN KEY (...) REFERENCES ... ("_pk") ON DELETE ...;`
    package func addForeignKey(_ key: ForeignKeyDefinition, to table: String) -> String {
        "ALTER TABLE \(name(table)) ADD FOREIGN KEY (\(SQLIdentifier.quote(key.column))) "
            + "REFERENCES \(name(key.referencedTable)) (\(SQLIdentifier.quote(SchemaMapping.primaryKeyColumn))) "
            + "ON DELETE \(key.onDelete);"
    }

    /// `CREATE INDEX ON ... (...);`
    package func createIndex(on table: String, _ column: String) -> String {
        "CREATE INDEX ON \(name(table)) (\(SQLIdentifier.quote(column)));"
    }

    /// A column's DDL after its name: type, collation, nullability, constraints (identity, default, UNIQUE).
    package func columnDDL(_ column: ColumnDefinition) -> String {
        var line = column.sqlType
        if let collation = column.collation { line += " COLLATE \(SQLIdentifier.quote(collation))" }
        if !column.isNullable { line += " NOT NULL" }
        if !column.constraints.isEmpty { line += " " + column.constraints }
        return line
    }

    /// `CREATE TABLE ...;` with the columns, inline foreign keys (join tables) and table constraints.
    package func createTable(_ table: TableDefinition) -> String {
        var lines = table.columns.map { column in
            var line = "    \(SQLIdentifier.quote(column.name)) \(columnDDL(column))"
            if let key = table.foreignKeys.first(where: { $0.column == column.name }), isInline(key, of: table) {
                line +=
                    " REFERENCES \(name(key.referencedTable)) "
                    + "(\(SQLIdentifier.quote(SchemaMapping.primaryKeyColumn))) ON DELETE \(key.onDelete)"
            }
            return line
        }
        lines += table.tableConstraints.map { "    " + $0 }
        let create = "CREATE TABLE \(name(table.name)) (\n" + lines.joined(separator: ",\n") + "\n);"
        return table.seedsRow ? create + "\nINSERT INTO \(name(table.name)) DEFAULT VALUES;" : create
    }

    /// Join tables reference entity tables created before them, so their keys are written inline.
    private func isInline(_ key: ForeignKeyDefinition, of table: TableDefinition) -> Bool {
        table.isJoinTable
    }

    /// A table's name as DDL, qualified with ``schema`` when there is one.
    package func name(_ table: String) -> String {
        SQLIdentifier(table, schema: schema).quoted
    }
}
