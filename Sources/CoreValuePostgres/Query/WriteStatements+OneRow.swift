@_spi(StoreImplementation) import CoreValue

/// One column a one-row update sets: its name, type and value (``WriteStatements/updateRow(table:key:version:columns:)``).
package struct ColumnValue: Sendable, Hashable {
    package var name: String
    package var type: AttributeType
    package var value: AttributeValue

    package init(name: String, type: AttributeType, value: AttributeValue) {
        self.name = name
        self.type = type
        self.value = value
    }
}

extension WriteStatements {
    /// ``update(table:keys:versions:columns:lockOrder:)`` for one row, with one scalar parameter per value:
    /// `UPDATE ... SET ... WHERE "_pk" = $1 [AND "_version" = $2] RETURNING "_pk", "_version"`. The server
    /// plans a primary-key lookup with no arrays to unpack, and the client encodes no arrays: the request
    /// path's save. `columns` are the ones the row sets.
    ///
    /// The statement of a shape (table, columns set, version checked or not) is built once and then sent again
    /// with this row's values bound (``StatementTemplates``): a request's save builds no SQL text.
    package func updateRow(table: String, key: Int64, version: Int64?, columns: [ColumnValue]) -> SQL {
        var binds: [SQLBind] = []
        binds.reserveCapacity(columns.count + 2)
        for column in columns { binds.append(.scalar(column.type, column.value)) }
        binds.append(.int64(key))
        if let version { binds.append(.int64(version)) }
        let shape = UpdateShape(table: table, columns: columns.map(\.name), versioned: version != nil)
        if let sql = templates.statement(for: shape, binding: binds) { return sql }
        return templates.keep(shape) { buildUpdateRow(table: table, key: key, version: version, columns: columns) }
    }

    /// What fixes a one-row `UPDATE`'s text.
    struct UpdateShape: Hashable, Sendable {
        var table: String
        var columns: [String]
        var versioned: Bool
    }

    /// ``updateRow(table:key:version:columns:)``'s statement, built.
    private func buildUpdateRow(table: String, key: Int64, version: Int64?, columns: [ColumnValue]) -> SQL {
        var assignments: [SQL] = []
        for column in columns {
            assignments.append("\(SQLIdentifier(column.name)) = \(typedBind: .scalar(column.type, column.value))")
        }
        assignments.append("\(Self.version) = t.\(Self.version) + 1")
        var sql: SQL =
            "UPDATE \(SQLIdentifier(table, schema: schema)) AS t SET \(SQL.joined(assignments, separator: ", ")) "
            + "WHERE t.\(Self.pk) = \(typedBind: .int64(key))"
        if let version { sql = sql + " AND t.\(Self.version) = \(typedBind: .int64(version))" }
        // By primary key: one row at most.
        return (sql + " RETURNING t.\(Self.pk), t.\(Self.version)").returning(
            [SchemaMapping.primaryKeyColumn, SchemaMapping.versionColumn], of: SQLIdentifier(table, schema: schema),
            atMostOne: true)
    }
}
