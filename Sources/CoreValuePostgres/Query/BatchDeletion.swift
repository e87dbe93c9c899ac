@_spi(StoreImplementation) import CoreValue

/// A batch delete the database carries out in one statement, with the checks its `deny` rules need first.
struct BatchDeletion {
    /// One statement per `deny` relationship: a row when a matched row still has related rows.
    var denyChecks: [(relationship: String, sql: SQL)]
    /// The delete: rows of the request's entity, then of each cascade's destination, in one statement with
    /// data-modifying `WITH` queries, returning `(ordinal in entities, "_pk")` for every row deleted.
    var delete: SQL
    /// The entity of each ordinal: the request's first.
    var entities: [String]
    /// Whether ``delete`` lists the rows; otherwise it is a plain `DELETE` (its row count the answer) or, with
    /// cascades, returns one row with the count of the entity's rows deleted.
    var listsRows: Bool
}

extension FetchStatements {
    /// The batch delete of `entity`'s matching rows in SQL, or `nil` when one statement cannot apply its
    /// delete rules (the store then deletes through a context).
    ///
    /// One statement can when every relationship of the entity nullifies (the database does: join-table rows
    /// go with their rows, foreign keys to the rows are `SET NULL`), denies (checked first, one statement
    /// each), or cascades to rows of another entity whose own relationships only nullify, each such entity
    /// reached once. Those rows are deleted in the same statement, from the same snapshot:
    /// `WITH doomed AS (DELETE FROM <entity> AS t WHERE ... RETURNING ...), c1 AS (DELETE FROM <destination> AS d
    /// WHERE <linked to doomed> RETURNING ...) SELECT 0, k FROM doomed UNION ALL SELECT 1, k FROM c1 ...`.
    ///
    /// - Throws: The predicate's compilation errors, before any SQL exists.
    func batchDelete(_ request: BatchDeleteRequest, entity: Entity, listsRows: Bool) throws -> BatchDeletion? {
        let model = mapping.model
        let pk = SQLIdentifier(SchemaMapping.primaryKeyColumn)
        let compiler = PredicateCompiler(mapping: mapping, entity: entity, alias: "t", schema: schema)
        let condition = try request.predicate.map { try compiler.compile($0) }
        var checks: [(relationship: String, sql: SQL)] = []
        var returned: [SQL] = ["t.\(pk) AS k"]
        var cascades: [SQL] = []
        var entities = [entity.name]
        var denied: Set<String> = []
        for (number, relationship) in entity.relationships.enumerated() {
            switch relationship.deleteRule {
            case .nullify: continue
            case .deny:
                denied.insert(relationship.destination)
                var check: SQL = "SELECT 1 FROM \(SQLIdentifier(entity.name, schema: schema)) AS t WHERE "
                check.append(linked(relationship, of: entity))
                if let condition { check.append(" AND (\(condition))") }
                checks.append((relationship.name, check + " LIMIT 1"))
            case .cascade:
                let destination = try model.entity(relationship.destination)
                let inverse = model.inverse(of: relationship)?.relationship.name
                guard destination.name != entity.name, !entities.contains(destination.name),
                    destination.relationships.allSatisfy({ $0.name == inverse || $0.deleteRule == .nullify })
                else { return nil }
                entities.append(destination.name)
                let column = SQLIdentifier("c\(number)")
                let keys: SQL
                switch mapping.storage(of: relationship, in: entity) {
                case .foreignKey:
                    returned.append("t.\(SQLIdentifier(relationship.name)) AS \(column)")
                    keys = "d.\(pk) IN (SELECT \(column) FROM doomed)"
                case .inverseForeignKey(_, let inverse):
                    keys = "d.\(SQLIdentifier(inverse)) IN (SELECT k FROM doomed)"
                case .joinTable, .inverseJoinTable:
                    guard let join = joinTable(of: relationship, in: entity) else { return nil }
                    keys =
                        "d.\(pk) IN (SELECT j.\(join.far) FROM \(join.table) AS j WHERE j.\(join.near) IN "
                        + "(SELECT k FROM doomed))"
                }
                cascades.append(
                    "\(column) AS (DELETE FROM \(SQLIdentifier(destination.name, schema: schema)) AS d WHERE \(keys) "
                        + "RETURNING d.\(pk) AS k)")
            }
        }
        // A row both denied and cascaded to (or of the entity itself) needs the context's per-row answer.
        guard denied.isDisjoint(with: entities) else { return nil }
        let table = SQLIdentifier(entity.name, schema: schema)
        // Nothing to list and nothing to cascade: the plain statement, whose row count is the answer.
        if !listsRows, cascades.isEmpty {
            var delete: SQL = "DELETE FROM \(table) AS t"
            if let condition { delete.append(" WHERE \(condition)") }
            return BatchDeletion(denyChecks: checks, delete: delete, entities: entities, listsRows: false)
        }
        var delete: SQL = "WITH doomed AS (DELETE FROM \(table) AS t"
        if let condition { delete.append(" WHERE \(condition)") }
        delete.append(" RETURNING \(SQL.joined(returned, separator: ", ")))")
        for cascade in cascades { delete.append(", \(cascade)") }
        // Every data-modifying WITH query runs to completion whether the main query reads it or not.
        guard listsRows else {
            delete.append(" SELECT count(*) FROM doomed")
            return BatchDeletion(denyChecks: checks, delete: delete, entities: entities, listsRows: false)
        }
        delete.append(" SELECT 0::bigint, k FROM doomed")
        for (ordinal, cascade) in cascadeNames(entity).enumerated() {
            delete.append(" UNION ALL SELECT \(SQL(unsafeRaw: String(ordinal + 1)))::bigint, k FROM \(cascade)")
        }
        return BatchDeletion(denyChecks: checks, delete: delete, entities: entities, listsRows: true)
    }

    /// The names of the cascade queries, in the entity's relationship order.
    private func cascadeNames(_ entity: Entity) -> [SQLIdentifier] {
        entity.relationships.enumerated().compactMap { number, relationship in
            relationship.deleteRule == .cascade ? SQLIdentifier("c\(number)") : nil
        }
    }

    /// A condition on the row `t` of `entity`: it has rows linked through `relationship`.
    private func linked(_ relationship: Relationship, of entity: Entity) -> SQL {
        let pk = SQLIdentifier(SchemaMapping.primaryKeyColumn)
        switch mapping.storage(of: relationship, in: entity) {
        case .foreignKey:
            return "t.\(SQLIdentifier(relationship.name)) IS NOT NULL"
        case .inverseForeignKey(let other, let inverse):
            return "EXISTS (SELECT 1 FROM \(SQLIdentifier(other, schema: schema)) AS r "
                + "WHERE r.\(SQLIdentifier(inverse)) = t.\(pk))"
        case .joinTable, .inverseJoinTable:
            guard let join = joinTable(of: relationship, in: entity) else { return "FALSE" }
            return "EXISTS (SELECT 1 FROM \(join.table) AS j WHERE j.\(join.near) = t.\(pk))"
        }
    }
}
