@_spi(StoreImplementation) import CoreValue

/// A batch delete the database carries out in one statement, with the checks its `deny` rules need first.
struct BatchDeletion {
    /// One statement per `deny` relationship of a row the batch deletes: a row when one of them still has
    /// related rows.
    var denyChecks: [(entity: String, relationship: String, sql: SQL)]
    /// The delete: rows of the request's entity, then of each entity its cascades reach, in one statement with
    /// data-modifying `WITH` queries. With ``listsRows`` it returns `(ordinal in entities, "_pk")` for every
    /// row deleted; without, either nothing (a plain `DELETE`: its row count is the answer) or, with
    /// cascades, one row with the count of the entity's rows deleted.
    var delete: SQL
    /// The entity of each ordinal: the request's first.
    var entities: [String]
    /// Whether ``delete`` lists the rows.
    var listsRows: Bool
}

extension FetchStatements {
    /// One entity a batch delete reaches: the request's own (no parent), or one a `cascade` relationship of
    /// its parent's rows leads to.
    private struct CascadeNode {
        var entity: Entity
        var parent: Int?
        var relationship: Relationship?
    }

    /// The batch delete of `entity`'s matching rows in SQL, or `nil` when one statement cannot apply the delete
    /// rules (the store then deletes through a context).
    ///
    /// The rules are followed from the entity through every `cascade` relationship, as a tree: each entity
    /// reached deletes the rows linked to the rows its parent deletes, in a data-modifying `WITH` query of the
    /// same statement, from the same snapshot (`WITH doomed AS (DELETE FROM <entity> AS t WHERE ... RETURNING
    /// ...), c1 AS (DELETE FROM <destination> AS d WHERE <linked to doomed> RETURNING ...), ... SELECT ...`).
    /// Relationships that nullify need nothing (join-table rows go with their rows, foreign keys to the rows
    /// are `SET NULL`); each `deny` relationship of a row deleted is checked first, one statement each. `nil`
    /// when an entity would be reached twice (a cycle, or two paths) or a `deny` relationship leads to an
    /// entity the batch deletes rows of: the context's rules decide those row by row.
    ///
    /// - Throws: The predicate's compilation errors, before any SQL exists.
    func batchDelete(_ request: BatchDeleteRequest, entity: Entity, listsRows: Bool) throws -> BatchDeletion? {
        let compiler = self.compiler(for: entity)
        let condition = try request.predicate.map { try compiler.compile($0) }
        guard let (nodes, denied) = try cascadeTree(from: entity) else { return nil }
        let entities = nodes.map(\.entity.name)
        var checks: [(entity: String, relationship: String, sql: SQL)] = []
        for (number, node) in nodes.enumerated() {
            for relationship in denied[number] {
                let keys = selectedKeys(nodes, number, condition)
                let check: SQL =
                    "SELECT 1 FROM \(SQLIdentifier(node.entity.name, schema: schema)) AS x WHERE x.\(primaryKey) IN "
                    + "(\(keys)) AND \(linked(relationship, of: node.entity, alias: "x")) LIMIT 1"
                checks.append((node.entity.name, relationship.name, check))
            }
        }
        let table = SQLIdentifier(entity.name, schema: schema)
        // Nothing to list and nothing to cascade: the plain statement, whose row count is the answer.
        if !listsRows, nodes.count == 1 {
            var delete: SQL = "DELETE FROM \(table) AS t"
            if let condition { delete.append(" WHERE \(condition)") }
            return BatchDeletion(denyChecks: checks, delete: delete, entities: entities, listsRows: false)
        }
        var delete: SQL = "WITH c0 AS (DELETE FROM \(table) AS t"
        if let condition { delete.append(" WHERE \(condition)") }
        delete.append(" RETURNING \(returned(nodes, 0, alias: "t")))")
        for number in nodes.indices.dropFirst() {
            delete.append(", \(cascade(nodes, number))")
        }
        // Every data-modifying WITH query runs to completion whether the main query reads it or not.
        guard listsRows else {
            delete.append(" SELECT count(*) FROM c0")
            return BatchDeletion(denyChecks: checks, delete: delete, entities: entities, listsRows: false)
        }
        let lists = nodes.indices.map { number -> SQL in
            "SELECT \(SQL(unsafeRaw: String(number)))::bigint, k FROM \(SQLIdentifier("c\(number)"))"
        }
        delete.append(" " + SQL.joined(lists, separator: " UNION ALL "))
        return BatchDeletion(denyChecks: checks, delete: delete, entities: entities, listsRows: true)
    }

    private var primaryKey: SQLIdentifier { SQLIdentifier(SchemaMapping.primaryKeyColumn) }

    /// The entities the cascades reach, breadth first, and each one's `deny` relationships; `nil` when one
    /// statement cannot follow them (see ``batchDelete(_:entity:listsRows:)``).
    private func cascadeTree(from entity: Entity) throws -> ([CascadeNode], [[Relationship]])? {
        var nodes = [CascadeNode(entity: entity, parent: nil, relationship: nil)]
        var denied: [[Relationship]] = []
        var reached: Set<String> = [entity.name]
        var deniedEntities: Set<String> = []
        var next = 0
        while next < nodes.count {
            let node = nodes[next]
            let back = node.relationship.flatMap { mapping.model.inverse(of: $0)?.relationship.name }
            var denies: [Relationship] = []
            for relationship in node.entity.relationships where relationship.name != back {
                switch relationship.deleteRule {
                case .nullify, .noAction: continue
                case .deny:
                    denies.append(relationship)
                    deniedEntities.insert(relationship.destination)
                case .cascade:
                    guard reached.insert(relationship.destination).inserted else { return nil }
                    let destination = try mapping.model.entity(relationship.destination)
                    nodes.append(CascadeNode(entity: destination, parent: next, relationship: relationship))
                }
            }
            denied.append(denies)
            next += 1
        }
        return deniedEntities.isDisjoint(with: reached) ? (nodes, denied) : nil
    }

    /// `node`'s `WITH` query: deletes its entity's rows linked to the rows its parent's query deleted.
    private func cascade(_ nodes: [CascadeNode], _ number: Int) -> SQL {
        let node = nodes[number]
        guard let parent = node.parent, let relationship = node.relationship else { return "" }
        let parentQuery = SQLIdentifier("c\(parent)")
        let keys: SQL
        switch mapping.storage(of: relationship, in: nodes[parent].entity) {
        case .foreignKey:
            keys = "d.\(primaryKey) IN (SELECT \(SQLIdentifier("f\(number)")) FROM \(parentQuery))"
        case .inverseForeignKey(_, let inverse):
            keys = "d.\(SQLIdentifier(inverse)) IN (SELECT k FROM \(parentQuery))"
        case .joinTable, .inverseJoinTable:
            guard let join = joinTable(of: relationship, in: nodes[parent].entity) else { return "" }
            keys =
                "d.\(primaryKey) IN (SELECT j.\(join.far) FROM \(join.table) AS j WHERE j.\(join.near) IN "
                + "(SELECT k FROM \(parentQuery)))"
        }
        return "\(SQLIdentifier("c\(number)")) AS (DELETE FROM \(SQLIdentifier(node.entity.name, schema: schema)) AS d "
            + "WHERE \(keys) RETURNING \(returned(nodes, number, alias: "d")))"
    }

    /// What `node`'s query returns: its rows' keys as `k`, and the foreign key each child reached through one
    /// of its columns needs, as `f<child>`.
    private func returned(_ nodes: [CascadeNode], _ number: Int, alias: String) -> SQL {
        var columns: [SQL] = ["\(SQL(unsafeRaw: alias)).\(primaryKey) AS k"]
        for (child, node) in nodes.enumerated() where node.parent == number {
            guard let relationship = node.relationship,
                case .foreignKey = mapping.storage(of: relationship, in: nodes[number].entity)
            else { continue }
            columns.append(
                "\(SQL(unsafeRaw: alias)).\(SQLIdentifier(relationship.name)) AS \(SQLIdentifier("f\(child)"))")
        }
        return SQL.joined(columns, separator: ", ")
    }

    /// A query of the keys of the rows `node` will delete, without deleting (for the `deny` checks).
    private func selectedKeys(_ nodes: [CascadeNode], _ number: Int, _ condition: SQL?) -> SQL {
        let node = nodes[number]
        let table = SQLIdentifier(node.entity.name, schema: schema)
        guard let parent = node.parent, let relationship = node.relationship else {
            return "SELECT t.\(primaryKey) FROM \(table) AS t" + (condition.map { " WHERE \($0)" } ?? "")
        }
        let parentKeys = selectedKeys(nodes, parent, condition)
        let parentTable = SQLIdentifier(nodes[parent].entity.name, schema: schema)
        switch mapping.storage(of: relationship, in: nodes[parent].entity) {
        case .foreignKey:
            return "SELECT p.\(SQLIdentifier(relationship.name)) FROM \(parentTable) AS p WHERE p.\(primaryKey) IN "
                + "(\(parentKeys))"
        case .inverseForeignKey(_, let inverse):
            return "SELECT r.\(primaryKey) FROM \(table) AS r WHERE r.\(SQLIdentifier(inverse)) IN (\(parentKeys))"
        case .joinTable, .inverseJoinTable:
            guard let join = joinTable(of: relationship, in: nodes[parent].entity) else { return "SELECT NULL::bigint" }
            return "SELECT j.\(join.far) FROM \(join.table) AS j WHERE j.\(join.near) IN (\(parentKeys))"
        }
    }

    /// A condition on the row `alias` of `entity`: it has rows linked through `relationship`.
    private func linked(_ relationship: Relationship, of entity: Entity, alias: String) -> SQL {
        let row = SQL(unsafeRaw: alias)
        switch mapping.storage(of: relationship, in: entity) {
        case .foreignKey:
            return "\(row).\(SQLIdentifier(relationship.name)) IS NOT NULL"
        case .inverseForeignKey(let other, let inverse):
            return "EXISTS (SELECT 1 FROM \(SQLIdentifier(other, schema: schema)) AS r "
                + "WHERE r.\(SQLIdentifier(inverse)) = \(row).\(primaryKey))"
        case .joinTable, .inverseJoinTable:
            guard let join = joinTable(of: relationship, in: entity) else { return "FALSE" }
            return "EXISTS (SELECT 1 FROM \(join.table) AS j WHERE j.\(join.near) = \(row).\(primaryKey))"
        }
    }
}
