@_spi(StoreImplementation) import CoreValue
import Foundation

extension SchemaCatalog {
    /// The catalog a database would have right after the DDL ``SchemaPrinter`` prints for `mapping` ran: what
    /// the schema diff compares a newer model with when there is no database at hand (two versions of one
    /// model, say). Columns with their types as the catalog names them, nullability, identity, collation and
    /// default; the primary key's, each unique attribute's and each join table's unique indexes and deferred
    /// unique constraints; the plain indexes; the foreign keys with their `ON DELETE` actions.
    init(expectedFor mapping: SchemaMapping) {
        self.init()
        for table in mapping.tables {
            var columns: [String: Column] = [:]
            for column in table.columns {
                let isKey = column.name == SchemaMapping.primaryKeyColumn && table.ownKey == nil
                columns[column.name] = Column(
                    type: ColumnType.informationSchemaName(of: column.sqlType), isNullable: column.isNullable,
                    isIdentity: isKey, collation: column.collation ?? "",
                    hasDefault: !isKey && (column.defaultLiteral != nil || column.name == SchemaMapping.versionColumn))
                if column.isUnique { addUnique([column.name], isPrimary: false, deferred: false, to: table.name) }
            }
            self.columns[table.name] = columns
            let key = table.isJoinTable ? nil : [table.ownKey ?? SchemaMapping.primaryKeyColumn]
            if let key { addUnique(key, isPrimary: true, deferred: false, to: table.name) }
            for constraint in table.tableConstraints {
                let named = Self.columns(in: constraint)
                if constraint.hasPrefix("PRIMARY KEY") {
                    addUnique(named, isPrimary: true, deferred: false, to: table.name)
                } else if constraint.hasPrefix("UNIQUE") {
                    let deferred = constraint.contains("DEFERRABLE")
                    addUnique(named, isPrimary: false, deferred: deferred, to: table.name)
                    uniqueConstraints[table.name, default: []].append(
                        UniqueConstraint(columns: named, isDeferrable: deferred, isInitiallyDeferred: deferred))
                }
            }
            for column in table.indexedColumns {
                indexes[table.name, default: []].append(Index(columns: [column], isUnique: false, isPrimary: false))
            }
            for key in table.foreignKeys {
                let action = ["CASCADE": "c", "SET NULL": "n", "NO ACTION": "a"][key.onDelete] ?? "a"
                foreignKeys[table.name, default: []].append(
                    ForeignKey(columns: [key.column], referencedTable: key.referencedTable, onDelete: action))
            }
        }
    }

    /// A unique index (and its entry among all indexes).
    private mutating func addUnique(_ columns: [String], isPrimary: Bool, deferred: Bool, to table: String) {
        uniqueIndexes[table, default: []].append(
            UniqueIndex(columns: columns, isPrimary: isPrimary, isImmediate: !deferred))
        indexes[table, default: []].append(Index(columns: columns, isUnique: true, isPrimary: isPrimary))
    }

    /// The quoted column names a table constraint's DDL lists, in order.
    private static func columns(in constraint: String) -> [String] {
        guard let open = constraint.firstIndex(of: "("), let close = constraint[open...].firstIndex(of: ")") else {
            return []
        }
        return constraint[constraint.index(after: open)..<close].split(separator: ",").map { name in
            name.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                .replacingOccurrences(of: "\"\"", with: "\"")
        }
    }
}

extension SchemaDiff {
    /// The DDL that takes a database made for `old` to `new` (two versions of one model), without a database:
    /// `new` compared with the catalog `old`'s DDL would leave. The same statements and destructive steps as
    /// `Migrator.diff(model:recordsHistory:)` on such a database.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidModel`` for a model PostgreSQL can't hold.
    public static func between(_ old: ManagedObjectModel, _ new: ManagedObjectModel, schema: String? = nil) throws
        -> SchemaDiff
    {
        let before = SchemaMapping(model: old)
        let after = SchemaMapping(model: new)
        try before.validate()
        try after.validate()
        return SchemaDiff(mapping: after, catalog: SchemaCatalog(expectedFor: before), schema: schema)
    }
}
