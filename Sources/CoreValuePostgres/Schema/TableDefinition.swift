/// One column of a table the store maps a model to.
package struct ColumnDefinition: Sendable, Hashable {
    /// The column name (unquoted).
    package var name: String
    /// The DDL type name, e.g. `bigint`.
    package var sqlType: String
    /// Whether the column accepts `NULL`.
    package var isNullable: Bool
    /// The rest of the column's DDL after type and nullability: identity, default, `UNIQUE`, `PRIMARY KEY`.
    package var constraints: String
    /// The collation (`C` for text: byte order, as `MemoryStore` compares), or `nil` for the type's default.
    package var collation: String?
    /// The attribute's default as a SQL literal (also part of ``constraints``), or `nil`.
    package var defaultLiteral: String?
    /// Whether the column is an attribute marked unique (its `UNIQUE` is part of ``constraints``).
    package var isUnique = false

    /// Creates a column definition.
    package init(
        name: String, sqlType: String, isNullable: Bool, constraints: String = "", collation: String? = nil,
        defaultLiteral: String? = nil, isUnique: Bool = false
    ) {
        self.name = name
        self.sqlType = sqlType
        self.isNullable = isNullable
        self.constraints = constraints
        self.collation = collation
        self.defaultLiteral = defaultLiteral
        self.isUnique = isUnique
    }
}

/// A foreign key from one column to another table's surrogate key.
package struct ForeignKeyDefinition: Sendable, Hashable {
    /// The referencing column.
    package var column: String
    /// The referenced table (its `"_pk"` column).
    package var referencedTable: String
    /// The `ON DELETE` action: `SET NULL`, `CASCADE` or `NO ACTION`.
    package var onDelete: String
}

/// One table of the mapping: an entity's table or a to-many relationship's join table.
package struct TableDefinition: Sendable, Hashable {
    /// The table name (unquoted).
    package var name: String
    /// The columns, in DDL order.
    package var columns: [ColumnDefinition]
    /// Table constraints written inside `CREATE TABLE` (primary key, unique), as DDL text built from quoted
    /// identifiers.
    package var tableConstraints: [String]
    /// Foreign keys, added after every table exists (entity tables may reference each other in cycles).
    package var foreignKeys: [ForeignKeyDefinition]
    /// Columns that get an index of their own.
    package var indexedColumns: [String]
    /// Whether this is a join table (its foreign keys are written inline: entity tables exist before it).
    package var isJoinTable: Bool
    /// Whether the table is made with one row of its columns' defaults (the history state).
    package var seedsRow = false
    /// For a table of the store's keyed by a column of its own (the commit table's `id`), that column: the
    /// primary key, in place of an identity `"_pk"`.
    package var ownKey: String? = nil
}
