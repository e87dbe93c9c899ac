/// One column of a table the store maps a model to.
public struct ColumnDefinition: Sendable, Hashable {
    /// The column name (unquoted).
    public var name: String
    /// The DDL type name, e.g. `bigint`.
    public var sqlType: String
    /// Whether the column accepts `NULL`.
    public var isNullable: Bool
    /// The rest of the column's DDL after type and nullability: identity, default, `UNIQUE`, `PRIMARY KEY`.
    public var constraints: String
    /// The collation (`C` for text: byte order, as `MemoryStore` compares), or `nil` for the type's default.
    public var collation: String?

    /// Creates a column definition.
    public init(name: String, sqlType: String, isNullable: Bool, constraints: String = "", collation: String? = nil) {
        self.name = name
        self.sqlType = sqlType
        self.isNullable = isNullable
        self.constraints = constraints
        self.collation = collation
    }
}

/// A foreign key from one column to another table's surrogate key.
public struct ForeignKeyDefinition: Sendable, Hashable {
    /// The referencing column.
    public var column: String
    /// The referenced table (its `"_pk"` column).
    public var referencedTable: String
    /// The `ON DELETE` action: `SET NULL`, `CASCADE` or `NO ACTION`.
    public var onDelete: String
}

/// One table of the mapping: an entity's table or a to-many relationship's join table.
public struct TableDefinition: Sendable, Hashable {
    /// The table name (unquoted).
    public var name: String
    /// The columns, in DDL order.
    public var columns: [ColumnDefinition]
    /// Table constraints written inside `CREATE TABLE` (primary key, unique), as DDL text built from quoted
    /// identifiers.
    public var tableConstraints: [String]
    /// Foreign keys, added after every table exists (entity tables may reference each other in cycles).
    public var foreignKeys: [ForeignKeyDefinition]
    /// Columns that get an index of their own.
    public var indexedColumns: [String]
    /// Whether this is a join table (its foreign keys are written inline: entity tables exist before it).
    public var isJoinTable: Bool
}
