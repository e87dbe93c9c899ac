@_spi(StoreImplementation) import CoreValue
import LibPQ

/// What the database's catalog says about one schema's tables: columns, indexes, unique constraints and
/// foreign keys, read in three statements. The schema is resolved explicitly: the given one, or
/// `current_schema()` (the search path's first existing schema), never the whole search path.
struct SchemaCatalog {
    struct Column {
        var type: String
        var isNullable: Bool
        var isIdentity: Bool
        /// The column's collation name; empty for types without one.
        var collation: String
        /// Whether the column has a default (identity columns report none).
        var hasDefault = false
    }

    /// A unique index usable as an `ON CONFLICT` arbiter or a primary key: plain columns, no predicate.
    struct UniqueIndex {
        var columns: [String]
        var isPrimary: Bool
        /// Checked at once (not a deferrable constraint's index): `ON CONFLICT` can only use these.
        var isImmediate: Bool
    }

    /// Any index on plain columns without a predicate: which columns, in order, and whether it is unique.
    struct Index {
        var columns: [String]
        var isUnique: Bool
        var isPrimary: Bool
    }

    struct UniqueConstraint {
        var columns: [String]
        var isDeferrable: Bool
        var isInitiallyDeferred: Bool
    }

    struct ForeignKey {
        var columns: [String]
        var referencedTable: String
        /// `pg_constraint.confdeltype`: `a` no action, `r` restrict, `c` cascade, `n` set null, `d` set default.
        var onDelete: String
    }

    var columns: [String: [String: Column]] = [:]
    var uniqueIndexes: [String: [UniqueIndex]] = [:]
    /// Every index (unique or not), for the leading columns join tables need.
    var indexes: [String: [Index]] = [:]
    var uniqueConstraints: [String: [UniqueConstraint]] = [:]
    var foreignKeys: [String: [ForeignKey]] = [:]

    /// The schema's OID, resolved once per statement.
    private static func namespace(_ schema: String?) -> SQL {
        let name = SQLBind.scalar(.string, schema.map(AttributeValue.string) ?? .null)
        return "(SELECT oid FROM pg_namespace WHERE nspname = coalesce(\(typedBind: name), current_schema()))"
    }

    /// The column names of `keys` (an `int2vector` or `int2[]` of attribute numbers of `relation`), in order.
    private static func columnNames(_ keys: String, of relation: String) -> SQL {
        SQL(
            unsafeRaw: "ARRAY(SELECT a.attname::text FROM unnest(\(keys)::int2[]) WITH ORDINALITY AS k(attnum, i) "
                + "JOIN pg_attribute a ON a.attrelid = \(relation) AND a.attnum = k.attnum ORDER BY k.i)")
    }

    static func columnsQuery(_ schema: String?) -> SQL {
        "SELECT c.relname::text, a.attname::text, format_type(a.atttypid, NULL), NOT a.attnotnull, a.attidentity <> '', "
            + "coalesce(coll.collname::text, ''), a.atthasdef "
            + "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            + "LEFT JOIN pg_collation coll ON coll.oid = a.attcollation "
            + "WHERE c.relnamespace = \(namespace(schema)) AND c.relkind IN ('r', 'p') AND a.attnum > 0 "
            + "AND NOT a.attisdropped ORDER BY c.relname, a.attnum"
    }

    static func indexesQuery(_ schema: String?) -> SQL {
        "SELECT c.relname::text, \(columnNames("i.indkey", of: "i.indrelid")), i.indisprimary, i.indimmediate, "
            + "i.indisunique FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
            + "WHERE c.relnamespace = \(namespace(schema)) AND i.indpred IS NULL AND i.indexprs IS NULL"
    }

    static func constraintsQuery(_ schema: String?) -> SQL {
        "SELECT c.relname::text, con.contype::text, \(columnNames("con.conkey", of: "con.conrelid")), "
            + "con.condeferrable, con.condeferred, coalesce(f.relname::text, ''), con.confdeltype::text "
            + "FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid "
            + "LEFT JOIN pg_class f ON f.oid = con.confrelid AND f.relnamespace = c.relnamespace "
            + "WHERE c.relnamespace = \(namespace(schema)) AND con.contype IN ('u', 'f')"
    }

    /// Reads the catalog of a schema.
    ///
    /// - Throws: Server errors.
    static func read(_ schema: String?, on connection: Connection) throws -> SchemaCatalog {
        func run(_ query: SQL) throws -> QueryResult {
            try connection.query(query.text, try query.binds.map(BindEncoding.postgresValue))
        }
        var catalog = SchemaCatalog()
        let columns = try run(columnsQuery(schema))
        for row in 0..<columns.rowCount {
            catalog.columns[try columns.decode(String.self, row: row, column: 0), default: [:]][
                try columns.decode(String.self, row: row, column: 1)] = Column(
                    type: try columns.decode(String.self, row: row, column: 2),
                    isNullable: try columns.decode(Bool.self, row: row, column: 3),
                    isIdentity: try columns.decode(Bool.self, row: row, column: 4),
                    collation: try columns.decode(String.self, row: row, column: 5),
                    hasDefault: try columns.decode(Bool.self, row: row, column: 6))
        }
        let indexes = try run(indexesQuery(schema))
        for row in 0..<indexes.rowCount {
            let table = try indexes.decode(String.self, row: row, column: 0)
            let columns = try indexes.decode([String].self, row: row, column: 1)
            let isPrimary = try indexes.decode(Bool.self, row: row, column: 2)
            let isUnique = try indexes.decode(Bool.self, row: row, column: 4)
            catalog.indexes[table, default: []].append(
                Index(columns: columns, isUnique: isUnique, isPrimary: isPrimary))
            guard isUnique else { continue }
            catalog.uniqueIndexes[table, default: []].append(
                UniqueIndex(
                    columns: columns, isPrimary: isPrimary,
                    isImmediate: try indexes.decode(Bool.self, row: row, column: 3)))
        }
        let constraints = try run(constraintsQuery(schema))
        for row in 0..<constraints.rowCount {
            let table = try constraints.decode(String.self, row: row, column: 0)
            let columns = try constraints.decode([String].self, row: row, column: 2)
            if try constraints.decode(String.self, row: row, column: 1) == "u" {
                catalog.uniqueConstraints[table, default: []].append(
                    UniqueConstraint(
                        columns: columns, isDeferrable: try constraints.decode(Bool.self, row: row, column: 3),
                        isInitiallyDeferred: try constraints.decode(Bool.self, row: row, column: 4)))
            } else {
                catalog.foreignKeys[table, default: []].append(
                    ForeignKey(
                        columns: columns, referencedTable: try constraints.decode(String.self, row: row, column: 5),
                        onDelete: try constraints.decode(String.self, row: row, column: 6)))
            }
        }
        return catalog
    }
}
