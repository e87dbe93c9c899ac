@_spi(StoreImplementation) import CoreValue

/// Builds the statements that read rows and relationship keys. Pure: text and binds only.
///
/// A row statement selects `"_pk"`, `"_version"`, every attribute in declaration order, then every owning
/// to-one column; a relationship statement selects `(source key, destination key)` pairs for many sources
/// at once, ordered by source and (for ordered relationships) position.
package struct FetchStatements: Sendable {
    /// The mapping the statements are built for.
    package let mapping: SchemaMapping
    /// The schema tables live in, or `nil` for the search path.
    package let schema: String?

    /// Each entity's row statement without a condition (``select(_:from:)`` from its own table), built once:
    /// a request's read then appends its condition to it instead of quoting every column again.
    private var selects: [String: SQL] = [:]
    /// Reads that compare one attribute, built so far (``oneComparison(_:_:)``).
    private let comparisons = StatementTemplates<ComparisonShape>()
    /// The collation of case-insensitive matches, as the store found it on the server.
    package let caseCollation = CaseCollation()

    /// A compiler of predicates on `entity`'s table as `t`, with the server's case collation.
    func compiler(for entity: Entity) -> PredicateCompiler {
        var compiler = PredicateCompiler(mapping: mapping, entity: entity, alias: "t", schema: schema)
        compiler.caseCollation = caseCollation.name
        return compiler
    }

    /// Creates a builder.
    package init(mapping: SchemaMapping, schema: String?) {
        self.mapping = mapping
        self.schema = schema
        for entity in mapping.model.entities {
            let select = select(entity)
            // One text part when it binds nothing (it never does): a read's text is then its few parts joined,
            // not every column's quoted name again.
            selects[entity.name] = select.binds.isEmpty ? SQL(unsafeRaw: select.text) : select
        }
    }

    /// The row statement for a fetch request: condition, order, limit and offset.
    ///
    /// A request without sort descriptors leaves the order unspecified, so without a window it gets no
    /// `ORDER BY` either: a sort holds back every row until the last is found (for 10,000 rows by
    /// identifier, 2-4 ms of the server's 8-16), where unsorted rows go out while the scan goes on.
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` / `.unknownKey` / `.typeMismatch` before any SQL exists.
    package func rows(for request: FetchRequest) throws -> SQL {
        try rows(for: request, of: try mapping.model.entity(request.entityName), hierarchical: nil)
    }

    /// ``rows(for:)`` for a caller that looked the request's entity up already (and, when not `nil`, whether
    /// it is in a hierarchy): a request's read looks it up once.
    package func rows(for request: FetchRequest, of entity: Entity, hierarchical: Bool?) throws -> SQL {
        let kind = (hierarchical ?? mapping.isHierarchical(entity.name)) ? entity.name : nil
        if kind == nil, let sql = try oneComparison(request, entity) { return sql }
        let compiler = self.compiler(for: entity)
        var sql = selects[entity.name] ?? select(entity)
        try appendFilter(
            request, compiler, to: &sql, ordered: !request.sortDescriptors.isEmpty, kinds: kind.map { [$0] })
        return sql
    }

    /// What fixes the text of a read that compares one attribute with a value.
    struct ComparisonShape: Hashable, Sendable {
        var entity: String
        var key: String
        var comparison: CVPredicate.ComparisonOperator
    }

    /// The statement of a request that only compares one attribute with a value (`id == 7`: a request's
    /// read by identifier), from the text kept for its entity, attribute and operator, with the value bound:
    /// built and compiled once, not per read. `nil` for any other request, and for a null operand (which
    /// compiles to `IS NULL`).
    private func oneComparison(_ request: FetchRequest, _ entity: Entity) throws -> SQL? {
        guard request.sortDescriptors.isEmpty, request.fetchLimit == nil, request.fetchOffset == 0,
            let predicate = request.predicate, case .comparison(let key, let comparison, let value) = predicate,
            let attribute = entity.attribute(named: key)
        else { return nil }
        let operand = try ValueCoercion.coerce(value, to: attribute, in: entity.name)
        guard !operand.isNull else { return nil }
        let shape = ComparisonShape(entity: entity.name, key: key, comparison: comparison)
        if let sql = comparisons.statement(for: shape, binding: [.scalar(attribute.type, operand)]) { return sql }
        return try comparisons.keep(shape) {
            let compiler = self.compiler(for: entity)
            var sql = selects[entity.name] ?? select(entity)
            sql.append(" WHERE \(try compiler.compile(predicate))")
            return sql
        }
    }

    /// Appends the request's `WHERE`, then its `ORDER BY` (always when `ordered`, else only for a window)
    /// and window. `kinds`: in a hierarchy's table, the entities whose rows are read (``SchemaMapping/entityColumn``).
    private func appendFilter(
        _ request: FetchRequest, _ compiler: PredicateCompiler, to sql: inout SQL, ordered: Bool, kinds: [String]? = nil
    ) throws {
        var conditions: [SQL] = []
        if let predicate = request.predicate { conditions.append(try compiler.compile(predicate)) }
        if let kinds { conditions.append(Self.kindFilter(kinds)) }
        if !conditions.isEmpty { sql.append(" WHERE \(SQL.joined(conditions, separator: " AND "))") }
        let windowed = request.fetchLimit != nil || request.fetchOffset > 0
        guard ordered || windowed else { return }
        sql.append(" ORDER BY \(try compiler.orderBy(request.sortDescriptors))")
        if let limit = request.fetchLimit { sql.append(" LIMIT \(bind: .int64(Int64(max(0, limit))))") }
        if request.fetchOffset > 0 { sql.append(" OFFSET \(bind: .int64(Int64(request.fetchOffset)))") }
    }

    /// The statement that counts the rows a request matches, its window applied.
    package func count(for request: FetchRequest) throws -> SQL {
        let entity = try mapping.model.entity(request.entityName)
        let compiler = self.compiler(for: entity)
        var inner: SQL = "SELECT 1 FROM \(SQLIdentifier(mapping.tableName(of: entity.name), schema: schema)) AS t"
        // A window counts the rows it keeps, so the order matters only with one.
        let kinds = mapping.isHierarchical(entity.name) ? request.entityNames(in: mapping.model) : nil
        try appendFilter(request, compiler, to: &inner, ordered: false, kinds: kinds)
        return "SELECT count(*) FROM (\(inner)) AS c"
    }

    /// The row statement for rows with these surrogate keys (and within their range, see
    /// ``SQL/keyRange(_:_:)``).
    package func rows(of entity: Entity, primaryKeys: [Int64]) -> SQL {
        let pk: SQL = "t.\(SQLIdentifier(SchemaMapping.primaryKeyColumn))"
        var sql =
            select(entity) + " WHERE \(pk) = ANY(\(typedBind: .int64Array(primaryKeys)))"
            + SQL.keyRange(pk, primaryKeys)
        if mapping.isHierarchical(entity.name) { sql.append(ownRows(of: entity)) }
        return sql
    }

    /// `t."_entity" = ANY($1)`: the rows of these entities in a hierarchy's table (the names bound, never
    /// spliced).
    static func kindFilter(_ kinds: [String]) -> SQL {
        "t.\(SQLIdentifier(SchemaMapping.entityColumn)) = ANY(\(typedBind: .array(.string, kinds.map(AttributeValue.string))))"
    }

    /// ` AND t."_entity" = ANY($n)` with the entity alone for an entity in a hierarchy; empty otherwise.
    func ownRows(of entity: Entity) -> SQL {
        mapping.isHierarchical(entity.name) ? " AND " + Self.kindFilter([entity.name]) : ""
    }

    /// The row statement for the rows a relationship kept in a join table links the rows `owners` of
    /// `entity` to: `SELECT <destination row> FROM <join table> AS j JOIN <destination> AS t ON t."_pk" =
    /// j.<other side> WHERE j.<this side> = ANY($1)`. The join table's index drives it, as a join; `= ANY`
    /// over the destinations' own keys was planned as a scan of their whole table (a company's 1,000
    /// members out of 10,000 rows: 2-3 ms, against under 1 ms). `nil` for a relationship kept in a foreign key.
    package func related(_ relationship: Relationship, of entity: Entity, owners: [Int64]) throws -> SQL? {
        guard let join = joinTable(of: relationship, in: entity) else { return nil }
        let destination = try mapping.model.entity(relationship.destination)
        // A hierarchy's rows are read by ID instead, each of its own entity.
        guard !mapping.isHierarchical(destination.name), !mapping.isHierarchical(entity.name) else { return nil }
        let pk = SQLIdentifier(SchemaMapping.primaryKeyColumn)
        return select(
            destination,
            from:
                "\(join.table) AS j JOIN \(SQLIdentifier(destination.name, schema: schema)) AS t ON t.\(pk) = j.\(join.far)"
        )
            + " WHERE j.\(join.near) = ANY(\(typedBind: .int64Array(owners)))"
    }

    /// The join table a relationship of `entity` is kept in, with its column for `entity`'s rows (`near`),
    /// the one for the rows it links to (`far`), and whether those are in position order (the owner's side of
    /// an ordered relationship); `nil` for a relationship kept in a foreign key.
    func joinTable(of relationship: Relationship, in entity: Entity)
        -> (table: SQLIdentifier, near: SQLIdentifier, far: SQLIdentifier, byPosition: Bool)?
    {
        let owner = SQLIdentifier(SchemaMapping.ownerColumn)
        let member = SQLIdentifier(SchemaMapping.memberColumn)
        switch mapping.storage(of: relationship, in: entity) {
        case .joinTable:
            let name = mapping.joinTableName(of: relationship, in: entity)
            return (SQLIdentifier(name, schema: schema), owner, member, relationship.kind == .orderedToMany)
        case .inverseJoinTable(let other, let inverse):
            let name = SchemaMapping.joinTableName(entity: other, relationship: inverse)
            return (SQLIdentifier(name, schema: schema), member, owner, false)
        case .foreignKey, .inverseForeignKey:
            return nil
        }
    }

    /// The row statement for rows whose attribute `key` has one of `values`.
    ///
    /// - Throws: `CVManagedStructError.unknownKey` / `.typeMismatch` before any SQL exists.
    package func rows(of entity: Entity, key: String, values: [AttributeValue]) throws -> SQL {
        guard let attribute = entity.attribute(named: key) else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        }
        let operands = try values.map { try ValueCoercion.coerce($0, to: attribute, in: entity.name) }
        return select(entity) + " WHERE t.\(SQLIdentifier(key)) = ANY(\(typedBind: .array(attribute.type, operands)))"
            + ownRows(of: entity)
    }

    /// The relationships of an entity not stored as a foreign key of its rows: each is read as a key array.
    package func separatelyLoaded(_ entity: Entity) -> [Relationship] {
        Self.separatelyLoaded(entity, mapping)
    }

    static func separatelyLoaded(_ entity: Entity, _ mapping: SchemaMapping) -> [Relationship] {
        entity.relationships.filter { mapping.storage(of: $0, in: entity) != .foreignKey }
    }

    /// The row columns (``RowReader``'s order): key, version, attributes, foreign keys, then, for each
    /// relationship not stored as a foreign key (``separatelyLoaded(_:)``), its destination keys in order as
    /// an `int8[]`: one statement reads rows and links together, in one snapshot, with no transaction.
    ///
    /// Each attribute is cast to its column type (`t."name"::text`), which the server drops for a column of
    /// that type: a binary COPY of the statement carries no column types, and its reader decodes each field
    /// as that type.
    private func select(_ entity: Entity, from source: SQL? = nil) -> SQL {
        let keys = [SchemaMapping.primaryKeyColumn, SchemaMapping.versionColumn]
        var columns = keys.map { SQL("t.\(SQLIdentifier($0))") }
        for attribute in entity.attributes {
            columns.append(
                SQL("t.\(SQLIdentifier(attribute.name))::") + SQL(unsafeRaw: ColumnType.sqlName(of: attribute.type)))
        }
        columns += mapping.foreignKeyRelationships(of: entity).map { SQL("t.\(SQLIdentifier($0.name))") }
        for relationship in separatelyLoaded(entity) {
            if let keys = linkedKeys(of: relationship, in: entity) { columns.append(keys) }
        }
        let from = source ?? "\(SQLIdentifier(mapping.tableName(of: entity.name), schema: schema)) AS t"
        return "SELECT \(SQL.joined(columns, separator: ", ")) FROM \(from)"
    }

    /// `ARRAY(SELECT ...)`: the keys a relationship of the row `t` links to, in the relationship's order
    /// (position for an ordered one, else key); `nil` for a foreign key (a column of the row itself).
    private func linkedKeys(of relationship: Relationship, in entity: Entity) -> SQL? {
        let pk = SQLIdentifier(SchemaMapping.primaryKeyColumn)
        if let join = joinTable(of: relationship, in: entity) {
            let order: SQL = join.byPosition ? "j.\(SQLIdentifier(SchemaMapping.positionColumn))" : "j.\(join.far)"
            return
                "ARRAY(SELECT j.\(join.far) FROM \(join.table) AS j WHERE j.\(join.near) = t.\(pk) ORDER BY \(order))"
        }
        guard case .inverseForeignKey(let other, let inverse) = mapping.storage(of: relationship, in: entity) else {
            return nil
        }
        let table = SQLIdentifier(mapping.tableName(of: other), schema: schema)
        let column = SQLIdentifier(inverse)
        return "ARRAY(SELECT o.\(pk) FROM \(table) AS o WHERE o.\(column) = t.\(pk) ORDER BY o.\(pk))"
    }
}
