@_spi(StoreImplementation) import CoreValue

/// Compiles a ``CVPredicate`` into a SQL condition over one entity's table, checking it against the model.
///
/// Every key must name an attribute (or, for `isNull` and equality with a key, a to-one relationship);
/// every operand is bound, coerced to the column's type. String matches escape `%`, `_` and `\` in their
/// operand; case-insensitive ones use `ILIKE` under the ICU root collation `und-x-icu`, or PostgreSQL 18's
/// builtin `pg_unicode_fast` on a server without ICU (text columns are `COLLATE "C"`, whose case folding is
/// ASCII only; the database's default collation folds by its locale), which lower-case exactly as
/// ``CaseFolding`` does in memory.
struct PredicateCompiler {
    let mapping: SchemaMapping
    let entity: Entity
    /// The alias of the entity's table in the statement.
    let alias: String
    /// The schema of the tables, for subqueries.
    let schema: String?
    /// The collation case-insensitive matches lower-case under: the ICU root collation `und-x-icu`, or on a
    /// server built without ICU, PostgreSQL 18's builtin `pg_unicode_fast` (see ``ServerCaseMapping``).
    var caseCollation = ServerCaseMapping.icuCollation

    /// The condition, e.g. `t."age" > $1`.
    ///
    /// - Throws: `CVManagedStructError.unknownKey` / `.typeMismatch`, or ``PostgresStoreError`` for a NUL.
    func compile(_ predicate: CVPredicate) throws -> SQL {
        // Only the nesting cases here, so that each level of a deep predicate costs a small stack frame; the
        // leaves (and their many locals) are compiled by `leaf`.
        switch predicate {
        case .and(let parts): return try group(parts, " AND ", empty: "TRUE")
        case .or(let parts): return try group(parts, " OR ", empty: "FALSE")
        case .not(let inner): return try negation(inner)
        case .related(let key, let inner): return try related(key, inner)
        default: return try leaf(predicate)
        }
    }

    private func group(_ parts: [CVPredicate], _ separator: SQL, empty: SQL) throws -> SQL {
        guard !parts.isEmpty else { return empty }
        return "(" + SQL.joined(try parts.map(compile), separator: separator) + ")"
    }

    private func negation(_ inner: CVPredicate) throws -> SQL {
        "NOT (\(try compile(inner)))"
    }

    @inline(never)
    private func leaf(_ predicate: CVPredicate) throws -> SQL {
        switch predicate {
        case .true: return "TRUE"
        case .false: return "FALSE"
        case .and, .or, .not, .related: return try compile(predicate)
        case .isNull(let key):
            if let attribute = entity.attribute(named: key) { return "\(column(attribute.name)) IS NULL" }
            return try toOneIsNull(key)
        case .comparison(let key, let op, let value):
            guard let attribute = entity.attribute(named: key) else { return try toOneComparison(key, op, value) }
            let operand = try ValueCoercion.coerce(value, to: attribute, in: entity.name)
            if operand.isNull {
                switch op {
                case .equal: return "\(column(key)) IS NULL"
                case .notEqual: return "\(column(key)) IS NOT NULL"
                default:
                    throw CVManagedStructError.typeMismatch(
                        entity: entity.name, key: key, expected: attribute.type.rawValue, found: "null")
                }
            }
            return "\(column(key)) \(SQL(unsafeRaw: op.rawValue)) \(bind: .scalar(attribute.type, operand))"
        case .isIn(let key, let values):
            let attribute = try self.attribute(key)
            let operands = try values.map { try ValueCoercion.coerce($0, to: attribute, in: entity.name) }
            guard !operands.isEmpty else { return "FALSE" }
            return "\(column(key)) = ANY(\(typedBind: .array(attribute.type, operands)))"
        case .between(let key, let low, let high):
            let attribute = try self.attribute(key)
            let lower = try ValueCoercion.coerce(low, to: attribute, in: entity.name)
            let upper = try ValueCoercion.coerce(high, to: attribute, in: entity.name)
            return "\(column(key)) BETWEEN \(bind: .scalar(attribute.type, lower)) "
                + "AND \(bind: .scalar(attribute.type, upper))"
        case .stringMatch(let key, let match, let operand, let caseInsensitive):
            let attribute = try self.attribute(key)
            guard attribute.type == .string else {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: key, expected: AttributeType.string.rawValue,
                    found: attribute.type.rawValue)
            }
            try ValueCoercion.checkStorable(.string(operand), entity: entity.name, key: key)
            try CVPredicate.checkLikePattern(match, operand, entity: entity.name, key: key)
            let pattern: String
            switch match {
            case .like: pattern = operand
            case .contains: pattern = "%" + CVPredicate.escapeLike(operand) + "%"
            case .beginsWith: pattern = CVPredicate.escapeLike(operand) + "%"
            case .endsWith: pattern = "%" + CVPredicate.escapeLike(operand)
            }
            guard caseInsensitive else { return "\(column(key)) LIKE \(bind: .text(pattern))" }
            // Text columns are COLLATE "C" (byte order), whose case folding is ASCII only, and the database's
            // default collation folds by its own locale (libc's towlower, say). Name the ICU root collation (or
            // the builtin one with the same mapping): full Unicode lower-casing of the server's Unicode version
            // (`PostgresStore.caseMappingVersion`), what `CaseFolding` does in memory with that version.
            return "\(column(key)) COLLATE \(SQLIdentifier(caseCollation)) ILIKE \(bind: .text(pattern))"
        }
    }

    /// The sort clause for sort descriptors, ending with the surrogate key so pages are stable.
    func orderBy(_ descriptors: [CVSortDescriptor]) throws -> SQL {
        var keys: [SQL] = []
        for descriptor in descriptors {
            let name: String
            if entity.attribute(named: descriptor.key) != nil {
                name = descriptor.key
            } else if let relationship = entity.relationship(named: descriptor.key),
                mapping.storage(of: relationship, in: entity) == .foreignKey
            {
                name = relationship.name
            } else {
                throw CVManagedStructError.unknownKey(entity: entity.name, key: descriptor.key)
            }
            keys.append("\(column(name)) \(descriptor.ascending ? "ASC" : "DESC")")
        }
        keys.append("\(column(SchemaMapping.primaryKeyColumn)) ASC")
        return SQL.joined(keys, separator: ", ")
    }

    func column(_ name: String) -> SQL {
        "\(SQL(unsafeRaw: alias)).\(SQLIdentifier(name))"
    }

    private func attribute(_ key: String) throws -> Attribute {
        guard let attribute = entity.attribute(named: key) else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        }
        return attribute
    }

    private func toOne(_ key: String) throws -> Relationship {
        guard let relationship = entity.relationship(named: key), !relationship.isToMany else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        }
        return relationship
    }

    /// A to-one relationship compared with a destination key (`.int64(pk)`) or null.
    private func toOneComparison(_ key: String, _ op: CVPredicate.ComparisonOperator, _ value: AttributeValue) throws
        -> SQL
    {
        let relationship = try toOne(key)
        guard mapping.storage(of: relationship, in: entity) == .foreignKey, op == .equal || op == .notEqual
        else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "a foreign-key to-one compared with = or <>",
                found: "\(op.rawValue) on \(relationship.kind.rawValue)")
        }
        let keyAttribute = Attribute(key, .int64, optional: true)
        let operand = try ValueCoercion.coerce(value, to: keyAttribute, in: entity.name)
        if operand.isNull { return "\(column(key)) IS \(op == .equal ? "NULL" : "NOT NULL")" }
        return "\(column(key)) \(SQL(unsafeRaw: op.rawValue)) \(bind: .scalar(.int64, operand))"
    }

    /// `EXISTS` over the objects a relationship reaches that match `inner`, wherever its links are stored.
    /// The subquery's aliases extend this one's (`t` → `tr`, `trr`), so nested levels never shadow each other.
    private func related(_ key: String, _ inner: CVPredicate) throws -> SQL {
        guard let relationship = entity.relationship(named: key) else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        }
        let destination = try mapping.model.entity(relationship.destination)
        var child = PredicateCompiler(mapping: mapping, entity: destination, alias: alias + "r", schema: schema)
        child.caseCollation = caseCollation
        let target = SQLIdentifier(mapping.tableName(of: destination.name), schema: schema)
        let join = SQL(unsafeRaw: alias + "j")
        let condition = try child.compile(inner)
        let pk = SQLIdentifier(SchemaMapping.primaryKeyColumn)
        let owner = SQLIdentifier(SchemaMapping.ownerColumn)
        let member = SQLIdentifier(SchemaMapping.memberColumn)
        let from: SQL
        switch mapping.storage(of: relationship, in: entity) {
        case .foreignKey:
            from = "\(target) AS \(SQL(unsafeRaw: child.alias)) WHERE \(child.column(pk.name)) = \(column(key))"
        case .inverseForeignKey(_, let inverse):
            from =
                "\(target) AS \(SQL(unsafeRaw: child.alias)) WHERE \(child.column(inverse)) = "
                + "\(column(SchemaMapping.primaryKeyColumn))"
        case .joinTable:
            let table = SQLIdentifier(mapping.joinTableName(of: relationship, in: entity), schema: schema)
            from =
                "\(table) AS \(join) JOIN \(target) AS \(SQL(unsafeRaw: child.alias)) ON \(child.column(pk.name)) = "
                + "\(join).\(member) WHERE \(join).\(owner) = \(column(SchemaMapping.primaryKeyColumn))"
        case .inverseJoinTable(let other, let inverse):
            let table = SQLIdentifier(SchemaMapping.joinTableName(entity: other, relationship: inverse), schema: schema)
            from =
                "\(table) AS \(join) JOIN \(target) AS \(SQL(unsafeRaw: child.alias)) ON \(child.column(pk.name)) = "
                + "\(join).\(owner) WHERE \(join).\(member) = \(column(SchemaMapping.primaryKeyColumn))"
        }
        return "EXISTS (SELECT 1 FROM \(from) AND \(condition))"
    }

    /// An empty to-one relationship, wherever its link is stored.
    private func toOneIsNull(_ key: String) throws -> SQL {
        let relationship = try toOne(key)
        let pk = column(SchemaMapping.primaryKeyColumn)
        switch mapping.storage(of: relationship, in: entity) {
        case .foreignKey, .joinTable:
            return "\(column(key)) IS NULL"
        case .inverseForeignKey(let other, let inverse):
            let table = SQLIdentifier(mapping.tableName(of: other), schema: schema)
            return "NOT EXISTS (SELECT 1 FROM \(table) AS i WHERE i.\(SQLIdentifier(inverse)) = \(pk))"
        case .inverseJoinTable(let other, let inverse):
            let table = SQLIdentifier(SchemaMapping.joinTableName(entity: other, relationship: inverse), schema: schema)
            return
                "NOT EXISTS (SELECT 1 FROM \(table) AS i WHERE i.\(SQLIdentifier(SchemaMapping.memberColumn)) = \(pk))"
        }
    }
}
