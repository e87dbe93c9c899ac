@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Compares a database's tables with a model's mapping and reports every difference at once.
///
/// Checked per table: every column with its type and nullability; `"_pk"` being an identity column and
/// the primary key; a non-deferrable unique index on each unique attribute (the upsert's `ON CONFLICT`
/// arbiter); a foreign key on each to-one column to its destination's table with the expected `ON DELETE`
/// action; and for join tables the primary key on (owner, member) in either order, their foreign keys and,
/// when ordered, the deferrable, initially deferred UNIQUE (owner, position).
struct SchemaVerifier {
    let mapping: SchemaMapping
    let schema: String?

    /// Every difference between the expected tables and the catalog.
    func mismatches(_ catalog: SchemaCatalog) -> [String] {
        var problems: [String] = []
        for table in mapping.tables {
            let quoted = "\(SQLIdentifier(table.name))"
            guard let columns = catalog.columns[table.name] else {
                problems.append("table \(quoted) is missing")
                continue
            }
            problems += columnMismatches(table, columns)
            let indexes = catalog.uniqueIndexes[table.name] ?? []
            let isOrdered = table.columns.contains { $0.name == SchemaMapping.positionColumn }
            let primaryKey =
                table.isJoinTable
                ? SchemaMapping.joinTableKey(ordered: isOrdered) : [table.ownKey ?? SchemaMapping.primaryKeyColumn]
            // In either column order: a join table created before ordered ones led with the member works alike.
            if !indexes.contains(where: { $0.isPrimary && Set($0.columns) == Set(primaryKey) }) {
                problems.append("table \(quoted) has no PRIMARY KEY (\(list(primaryKey)))")
            }
            if !table.isJoinTable, table.ownKey == nil, let pk = columns[SchemaMapping.primaryKeyColumn], !pk.isIdentity
            {
                problems.append(
                    "column \(quoted).\(SQLIdentifier(SchemaMapping.primaryKeyColumn)) is not an identity column")
            }
            for column in uniqueColumns(of: table)
            where !indexes.contains(where: { $0.isImmediate && $0.columns == [column] }) {
                problems.append(
                    "column \(quoted).\(SQLIdentifier(column)) has no UNIQUE constraint (unique attribute, the "
                        + "upsert key; a deferrable one cannot serve ON CONFLICT)")
            }
            if table.isJoinTable,
                table.tableConstraints.contains(where: {
                    $0.hasPrefix("UNIQUE (\(SQLIdentifier.quote(SchemaMapping.memberColumn)))")
                })
            {
                let expected = [SchemaMapping.memberColumn]
                let found = catalog.uniqueConstraints[table.name] ?? []
                if !found.contains(where: { $0.columns == expected && $0.isDeferrable && $0.isInitiallyDeferred }) {
                    problems.append(
                        "table \(quoted) has no UNIQUE (\(list(expected))) DEFERRABLE INITIALLY DEFERRED "
                            + "(a member of a one-to-many relationship has one owner)")
                }
            }
            if table.columns.contains(where: { $0.name == SchemaMapping.positionColumn }), table.isJoinTable {
                let expected = [SchemaMapping.ownerColumn, SchemaMapping.positionColumn]
                let found = catalog.uniqueConstraints[table.name] ?? []
                if !found.contains(where: { $0.columns == expected && $0.isDeferrable && $0.isInitiallyDeferred }) {
                    problems.append(
                        "table \(quoted) has no UNIQUE (\(list(expected))) DEFERRABLE INITIALLY DEFERRED")
                }
            }
            problems += foreignKeyMismatches(table, catalog.foreignKeys[table.name] ?? [])
        }
        return problems
    }

    private func columnMismatches(_ table: TableDefinition, _ columns: [String: SchemaCatalog.Column]) -> [String] {
        var problems: [String] = []
        for column in table.columns {
            let name = "\(SQLIdentifier(table.name)).\(SQLIdentifier(column.name))"
            guard let actual = columns[column.name] else {
                problems.append("column \(name) is missing (expected \(column.sqlType))")
                continue
            }
            let expected = ColumnType.informationSchemaName(of: column.sqlType)
            if actual.type != expected {
                problems.append("column \(name) has type \(actual.type), expected \(expected)")
            }
            if let collation = column.collation, actual.collation != collation {
                problems.append(
                    "column \(name) has collation \(actual.collation.isEmpty ? "default" : actual.collation), "
                        + "expected \(collation)")
            }
            if actual.isNullable != column.isNullable {
                problems.append(
                    "column \(name) is \(nullability(actual.isNullable)), expected \(nullability(column.isNullable))")
            }
        }
        return problems
    }

    private func foreignKeyMismatches(_ table: TableDefinition, _ found: [SchemaCatalog.ForeignKey]) -> [String] {
        var problems: [String] = []
        for key in table.foreignKeys {
            let name = "\(SQLIdentifier(table.name)).\(SQLIdentifier(key.column))"
            let matching = found.filter { $0.columns == [key.column] && $0.referencedTable == key.referencedTable }
            guard !matching.isEmpty else {
                problems.append("column \(name) has no FOREIGN KEY to \(SQLIdentifier(key.referencedTable))")
                continue
            }
            let accepted = Self.deleteTypes(key.onDelete)
            if !matching.contains(where: { accepted.contains($0.onDelete) }) {
                problems.append(
                    "foreign key on \(name) does not say ON DELETE \(key.onDelete) (found "
                        + "\(matching.map { Self.deleteAction($0.onDelete) }.joined(separator: ", ")))")
            }
        }
        return problems
    }

    /// The unique attributes' columns of an entity table.
    private func uniqueColumns(of table: TableDefinition) -> [String] {
        guard !table.isJoinTable, let entity = mapping.model.entity(named: table.name) else { return [] }
        return entity.attributes.filter(\.isUnique).map(\.name)
    }

    /// `pg_constraint.confdeltype` codes that do what an `ON DELETE` action asks (RESTRICT only differs from
    /// NO ACTION in when it is checked).
    private static func deleteTypes(_ action: String) -> Set<String> {
        switch action {
        case "CASCADE": return ["c"]
        case "SET NULL": return ["n"]
        default: return ["a", "r"]
        }
    }

    private static func deleteAction(_ code: String) -> String {
        switch code {
        case "c": return "CASCADE"
        case "n": return "SET NULL"
        case "r": return "RESTRICT"
        case "d": return "SET DEFAULT"
        default: return "NO ACTION"
        }
    }

    private func nullability(_ isNullable: Bool) -> String { isNullable ? "nullable" : "NOT NULL" }

    private func list(_ columns: [String]) -> String {
        columns.map { "\(SQLIdentifier($0))" }.joined(separator: ", ")
    }

    /// Reads the schema's catalog and throws when anything differs.
    ///
    /// - Throws: ``PostgresStoreError/Code/schemaMismatch`` listing every difference; server errors.
    func verify(on connection: Connection) throws {
        let problems = mismatches(try SchemaCatalog.read(schema, on: connection))
        guard problems.isEmpty else {
            throw PostgresStoreError(
                .schemaMismatch,
                "the database\(schema.map { " schema \(SQLIdentifier($0))" } ?? "") does not match the model "
                    + "(\(problems.count) difference\(problems.count == 1 ? "" : "s")); run the migrations",
                mismatches: problems)
        }
    }
}
