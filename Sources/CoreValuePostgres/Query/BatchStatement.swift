@_spi(StoreImplementation) import CoreValue

extension FetchStatements {
    /// The one statement of a batch update: `UPDATE <table> AS t SET <column> = $n, ..., "_version" =
    /// t."_version" + 1 [WHERE <predicate>] [RETURNING t."_pk", t."_version"]`. Each value is bound with its
    /// attribute's type; every row written moves to its next version, so a context that read it before
    /// conflicts when it saves it.
    ///
    /// - Throws: The predicate's compilation errors and ``PostgresStoreError/Code/invalidValue`` for a NUL,
    ///   before any SQL exists.
    package func batchUpdate(_ request: BatchUpdateRequest, entity: Entity, returning: Bool) throws -> SQL {
        var assignments: [SQL] = []
        // In the entity's order: the same request always gives the same text (a prepared statement's key).
        for attribute in entity.attributes {
            guard let value = request.values[attribute.name] else { continue }
            let operand = try ValueCoercion.coerce(value, to: attribute, in: entity.name)
            assignments.append("\(SQLIdentifier(attribute.name)) = \(bind: .scalar(attribute.type, operand))")
        }
        let version = SQLIdentifier(SchemaMapping.versionColumn)
        assignments.append("\(version) = t.\(version) + 1")
        var sql: SQL =
            "UPDATE \(SQLIdentifier(entity.name, schema: schema)) AS t SET \(SQL.joined(assignments, separator: ", "))"
        if let predicate = request.predicate {
            let compiler = self.compiler(for: entity)
            sql.append(" WHERE \(try compiler.compile(predicate))")
        }
        if returning { sql.append(" RETURNING t.\(SQLIdentifier(SchemaMapping.primaryKeyColumn)), t.\(version)") }
        return sql
    }
}
