@_spi(StoreImplementation) import CoreValue
import Synchronization

/// The values of one column for every row of a batched write.
package struct ColumnValues: Sendable, Hashable {
    /// The column name.
    package var name: String
    /// The column's attribute type (`int64` for foreign keys).
    package var type: AttributeType
    /// One value per row.
    package var values: [AttributeValue]
    /// For updates: which rows set this column (`nil`: every row does).
    package var isSet: [Bool]?

    /// Creates the values of a column.
    package init(name: String, type: AttributeType, values: [AttributeValue], isSet: [Bool]? = nil) {
        self.name = name
        self.type = type
        self.values = values
        self.isSet = isSet
    }
}

/// The order a batched update takes its row locks in: by an attribute (a unique entity's identifier), then
/// by key; or by key alone (`attribute == nil`).
package struct LockOrder: Sendable, Hashable {
    /// The attribute rows are locked in the order of, before their key.
    package var attribute: Attribute?

    /// Creates a lock order.
    package init(attribute: Attribute?) {
        self.attribute = attribute
    }
}

/// Builds the batched write statements of a save: each binds one array per column, so the number of
/// statements depends on the entities and relationships touched, never on the number of rows.
package struct WriteStatements: Sendable {
    /// The schema tables live in, or `nil` for the search path.
    package let schema: String?
    /// The one-row `UPDATE`s built so far, by shape, sent again with other values.
    let templates = StatementTemplates<UpdateShape>()

    /// Creates a builder.
    package init(schema: String?) {
        self.schema = schema
    }

    static let pk = SQLIdentifier(SchemaMapping.primaryKeyColumn)
    static let version = SQLIdentifier(SchemaMapping.versionColumn)

    /// `INSERT ... SELECT ... FROM unnest(...) WITH ORDINALITY ... RETURNING "_pk", "_version"`.
    ///
    /// Rows are inserted in input order, so their identity keys ascend in input order.
    package func insert(into table: String, columns: [ColumnValues], rowCount: Int) -> SQL {
        let target = SQLIdentifier(table, schema: schema)
        guard !columns.isEmpty else {
            return
                "INSERT INTO \(target) (\(Self.version)) SELECT 1 FROM generate_series(1, \(typedBind: .int64(Int64(rowCount)))) "
                + "RETURNING \(Self.pk), \(Self.version)"
        }
        return "INSERT INTO \(target) AS t (\(names(columns))) \(source(columns)) "
            + "RETURNING t.\(Self.pk), t.\(Self.version)"
    }

    /// `INSERT ... ON CONFLICT (key) DO UPDATE SET ..., "_version" = t."_version" + 1 RETURNING "_pk",
    /// "_version", key`: atomic across processes. The caller passes each key value once.
    ///
    /// Rows are written in key order (byte order for text), not input order, so concurrent batches lock
    /// existing rows in the same order, the order ``lock(table:keys:orderedBy:)`` takes for updates, and cannot
    /// deadlock each other; the caller maps returned rows back by their key.
    package func upsert(into table: String, key: Attribute, columns: [ColumnValues]) -> SQL {
        let entityColumn = SchemaMapping.entityColumn
        var assignments: [SQL] = columns.filter { $0.name != key.name && $0.name != entityColumn }.map {
            "\(SQLIdentifier($0.name)) = EXCLUDED.\(SQLIdentifier($0.name))"
        }
        assignments.append("\(Self.version) = t.\(Self.version) + 1")
        // In a hierarchy's table, a row of another entity with the identifier is not this entity's to update:
        // left alone, it returns no row, and the save fails (the identifier is unique across the hierarchy).
        let sameEntity: SQL =
            columns.contains { $0.name == entityColumn }
            ? "WHERE t.\(SQLIdentifier(entityColumn)) = EXCLUDED.\(SQLIdentifier(entityColumn)) " : ""
        return keyedInsert(
            into: table, key: key, columns: columns,
            onConflict:
                "ON CONFLICT (\(SQLIdentifier(key.name))) DO UPDATE SET \(SQL.joined(assignments, separator: ", ")) "
                + sameEntity)
    }

    /// ``upsert(into:key:columns:)`` without `ON CONFLICT`, for rows no stored row shares an identifier with:
    /// the same rows in the same order and the same result columns, without the speculative insertion that
    /// `ON CONFLICT` makes per row (a quarter of the statement's time). A row whose identifier is taken after
    /// all (another writer's, committed since) fails the statement with a unique violation (23505), and the
    /// caller writes the rows again with ``upsert(into:key:columns:)``.
    package func insertNew(into table: String, key: Attribute, columns: [ColumnValues]) -> SQL {
        keyedInsert(into: table, key: key, columns: columns, onConflict: "")
    }

    /// `INSERT ... SELECT ... ORDER BY key` with `onConflict` (empty, or a clause ending in a space), returning
    /// each row's key, version and identifier: what ``upsert(into:key:columns:)`` and
    /// ``insertNew(into:key:columns:)`` send.
    private func keyedInsert(into table: String, key: Attribute, columns: [ColumnValues], onConflict: SQL) -> SQL {
        let target = SQLIdentifier(table, schema: schema)
        let sql: SQL =
            "INSERT INTO \(target) AS t (\(names(columns))) \(source(columns, orderedBy: key)) "
            + onConflict + "RETURNING t.\(Self.pk), t.\(Self.version), t.\(SQLIdentifier(key.name))"
        // One row given, one row at most (a request's save of a new unique struct).
        return sql.returning(
            [SchemaMapping.primaryKeyColumn, SchemaMapping.versionColumn, key.name], of: target,
            atMostOne: !columns.isEmpty && columns.allSatisfy { $0.values.count == 1 })
    }

    /// `COPY table ("_pk", "_version", attributes...) FROM STDIN (FORMAT binary)`: new rows with their keys
    /// given (reserved by ``reserveKeys(table:count:)``; COPY writes an identity column's given values, and
    /// returns nothing), at the first version, with every attribute in the entity's order.
    package func copyNew(into table: String, attributes: [Attribute]) -> SQL {
        let columns = [Self.pk, Self.version] + attributes.map { SQLIdentifier($0.name) }
        return "COPY \(SQLIdentifier(table, schema: schema)) (\(list(columns))) FROM STDIN (FORMAT binary)"
    }

    /// `SELECT array_agg(nextval((SELECT pg_get_serial_sequence(...))::regclass)) FROM generate_series(1, $3)`:
    /// `count` new values of the table's surrogate-key sequence, in one array, as the identity column would
    /// take them. The sequence is looked up once (a subquery, run before the rows): called per row, the
    /// lookup was four fifths of the statement's time.
    package func reserveKeys(table: String, count: Int) -> SQL {
        let name = SQLIdentifier(table, schema: schema).quoted
        return "SELECT array_agg(nextval((SELECT pg_get_serial_sequence(\(bind: .text(name)), "
            + "\(bind: .text(SchemaMapping.primaryKeyColumn))))::regclass)) "
            + "FROM generate_series(1, \(typedBind: .int64(Int64(count))))"
    }

    /// `SELECT 1 FROM (SELECT max(key) ...) WHERE m >= $1`: a row when a stored row has an identifier of
    /// `lowest` or above (text in byte order, as the column sorts), none otherwise. Nothing is locked.
    ///
    /// Asked as the greatest identifier, which PostgreSQL always reads from the end of the identifier's index
    /// (one descent). `WHERE key >= $1 LIMIT 1` was planned as a sequential scan whenever the planner expected
    /// many matches: on a table without fresh statistics, as during a bulk load, it read the whole table.
    package func anyRow(in table: String, key: Attribute, from lowest: AttributeValue) -> SQL {
        "SELECT 1 FROM (SELECT max(\(Self.orderKey("t", key))) AS m FROM \(SQLIdentifier(table, schema: schema)) AS t) "
            + "AS s WHERE s.m >= \(typedBind: .scalar(key.type, lowest))"
    }

    /// `UPDATE ... FROM unnest(keys, versions, columns...) ... RETURNING "_pk", "_version"`: rows whose version
    /// moved on are not returned (a conflict). Columns set by only some rows keep the others' values. A save
    /// writes a single row through ``updateRow(table:key:version:columns:)`` instead.
    ///
    /// With `lockOrder`, the statement first takes the rows' locks in that order
    /// (``lock(table:keys:orderedBy:)`` as a CTE counted by a one-time filter, which runs before any row is
    /// scanned): still one statement and one round trip.
    package func update(
        table: String, keys: [Int64], versions: [Int64?], columns: [ColumnValues], lockOrder: LockOrder? = nil
    ) -> SQL {
        var prefix: SQL = ""
        var gate: SQL = ""
        if let lockOrder {
            let locked = SQLIdentifier("_locked")
            prefix = "WITH \(locked) AS (\(lock(table: table, keys: keys, orderedBy: lockOrder.attribute))) "
            gate = " AND (SELECT count(*) FROM \(locked)) >= 0"
        }
        var arrays: [SQL] = ["\(typedBind: .int64Array(keys))", "\(typedBind: .optionalInt64Array(versions))"]
        var aliases = [Self.pk, Self.version]
        var assignments: [SQL] = []
        var flagCount = 0
        for column in columns {
            let name = SQLIdentifier(column.name)
            arrays.append("\(typedBind: .array(column.type, column.values))")
            aliases.append(name)
            if let isSet = column.isSet {
                // A short generated alias: "_set_" + a 60-byte name would pass 63 bytes and be truncated.
                // Model keys never start with "_", so it cannot clash with a column.
                flagCount += 1
                let flag = SQLIdentifier("_s\(flagCount)")
                arrays.append("\(typedBind: .boolArray(isSet))")
                aliases.append(flag)
                assignments.append("\(name) = CASE WHEN u.\(flag) THEN u.\(name) ELSE t.\(name) END")
            } else {
                assignments.append("\(name) = u.\(name)")
            }
        }
        assignments.append("\(Self.version) = t.\(Self.version) + 1")
        return prefix
            + "UPDATE \(SQLIdentifier(table, schema: schema)) AS t SET \(SQL.joined(assignments, separator: ", ")) "
            + "FROM unnest(\(SQL.joined(arrays, separator: ", "))) AS u(\(list(aliases))) "
            + "WHERE t.\(Self.pk) = u.\(Self.pk) AND (u.\(Self.version) IS NULL OR t.\(Self.version) = u.\(Self.version))"
            + gate + " RETURNING t.\(Self.pk), t.\(Self.version)"
    }

    /// `SELECT "_pk", "_version" ... WHERE "_pk" = ANY($1)`: the versions of these rows now (a row that no
    /// longer exists is not returned), for checking rows that are written only if another writer moved them
    /// on (``ObjectChange/unlessCurrent``) without sending their values. Nothing is locked: a current row is not
    /// written. `= ANY` lets the planner choose the primary key's index for a few rows of a large table (a join
    /// with `unnest` was planned as a scan of the whole table).
    /// With the keys' range as well (``SQL/keyRange(_:_:)``), so that few keys of a large table are read
    /// through the primary key's index.
    package func versions(table: String, keys: [Int64]) -> SQL {
        "SELECT t.\(Self.pk), t.\(Self.version) FROM \(SQLIdentifier(table, schema: schema)) AS t "
            + "WHERE t.\(Self.pk) = ANY(\(typedBind: .int64Array(keys)))" + SQL.keyRange("t.\(Self.pk)", keys)
    }

    /// The row locks of a batched update, taken in one order whatever order the rows were given in:
    /// `SELECT "_pk" ... WHERE "_pk" = ANY($1) ORDER BY ..., "_pk" FOR NO KEY UPDATE` (the lock the `UPDATE` itself
    /// takes, which does not block the `KEY SHARE` locks of foreign-key checks). Writers of the same rows then
    /// queue instead of deadlocking. A unique entity's rows are locked in the order of its identifier (`column`, byte
    /// order for text), the order its upserts lock them in; others in key order.
    package func lock(table: String, keys: [Int64], orderedBy column: Attribute?) -> SQL {
        var order: SQL = ""
        if let column { order = "\(Self.orderKey("t", column)), " }
        return "SELECT t.\(Self.pk) FROM \(SQLIdentifier(table, schema: schema)) AS t "
            + "WHERE t.\(Self.pk) = ANY(\(typedBind: .int64Array(keys))) ORDER BY \(order)t.\(Self.pk) FOR NO KEY UPDATE"
    }

    /// `SELECT ... WHERE key = ANY($1) ORDER BY key FOR NO KEY UPDATE`: the existing rows of a unique entity with
    /// these identifiers, locked in identifier order (rows that don't exist yet are locked by the upsert
    /// that inserts them, in the same order).
    package func lock(table: String, identifiers: [AttributeValue], of key: Attribute) -> SQL {
        "SELECT t.\(Self.pk) FROM \(SQLIdentifier(table, schema: schema)) AS t "
            + "WHERE t.\(SQLIdentifier(key.name)) = ANY(\(typedBind: .array(key.type, identifiers))) "
            + "ORDER BY \(Self.orderKey("t", key)) FOR NO KEY UPDATE"
    }

    /// A sort key for an attribute's column under `alias`: text in byte order (`COLLATE "C"`, as the column is
    /// declared), so that arrays bound as parameters sort like the table's column.
    private static func orderKey(_ alias: String, _ attribute: Attribute) -> SQL {
        let column: SQL = "\(SQL(unsafeRaw: alias)).\(SQLIdentifier(attribute.name))"
        return ColumnType.isText(attribute.type) ? "\(column) COLLATE \"C\"" : column
    }

    /// Sets a foreign-key column of freshly inserted rows whose destination was inserted later in the save.
    package func link(table: String, column: String, keys: [Int64], targets: [Int64]) -> SQL {
        let name = SQLIdentifier(column)
        return "UPDATE \(SQLIdentifier(table, schema: schema)) AS t SET \(name) = u.\(name) "
            + "FROM unnest(\(typedBind: .int64Array(keys)), \(typedBind: .int64Array(targets))) AS u(\(Self.pk), \(name)) "
            + "WHERE t.\(Self.pk) = u.\(Self.pk)"
    }

    /// `DELETE ... USING unnest(keys, versions) ... RETURNING "_pk"`: rows whose version moved on stay.
    package func delete(from table: String, keys: [Int64], versions: [Int64?]) -> SQL {
        let target = SQLIdentifier(table, schema: schema)
        let sql: SQL =
            "DELETE FROM \(target) AS t "
            + "USING unnest(\(typedBind: .int64Array(keys)), \(typedBind: .optionalInt64Array(versions))) "
            + "AS d(\(Self.pk), \(Self.version)) "
            + "WHERE t.\(Self.pk) = d.\(Self.pk) AND (d.\(Self.version) IS NULL OR t.\(Self.version) = d.\(Self.version)) "
            + "RETURNING t.\(Self.pk)"
        return sql.returning([SchemaMapping.primaryKeyColumn], of: target)
    }

    /// Deletes the join rows of the changed owners that are not in their new lists. With `detachMembers`
    /// (a one-to-many: each member has at most one owner), members linked to a new owner also leave their
    /// old one.
    package func unlink(joinTable: String, owners: [Int64], pairs: [(owner: Int64, member: Int64)], detachMembers: Bool)
        -> SQL
    {
        let owner = SQLIdentifier(SchemaMapping.ownerColumn)
        let member = SQLIdentifier(SchemaMapping.memberColumn)
        var scope: SQL = "j.\(owner) = ANY(\(typedBind: .int64Array(owners)))"
        if detachMembers {
            scope = "(\(scope) OR j.\(member) = ANY(\(typedBind: .int64Array(pairs.map(\.member)))))"
        }
        return "DELETE FROM \(SQLIdentifier(joinTable, schema: schema)) AS j WHERE \(scope) AND NOT EXISTS ("
            + "SELECT 1 FROM unnest(\(typedBind: .int64Array(pairs.map(\.owner)))"
            + ", \(typedBind: .int64Array(pairs.map(\.member)))) AS n(\(owner), \(member)) "
            + "WHERE n.\(owner) = j.\(owner) AND n.\(member) = j.\(member))"
    }

    /// Inserts the new join rows and moves existing ones to their new positions (ordered) or leaves them
    /// (unordered). Each (owner, member) pair appears once.
    ///
    /// With `newOwners` (every owner's row was inserted by this transaction, so no join row can name it
    /// yet), a plain `INSERT`: `ON CONFLICT`'s speculative insertion was a fifth of the statement's time for
    /// 1,000 new links. Should a pair exist after all, the statement fails (23505) rather than move it.
    package func link(
        joinTable: String, pairs: [(owner: Int64, member: Int64)], positions: [Int32]?, newOwners: Bool = false
    ) -> SQL {
        let owner = SQLIdentifier(SchemaMapping.ownerColumn)
        let member = SQLIdentifier(SchemaMapping.memberColumn)
        let table = SQLIdentifier(joinTable, schema: schema)
        let owners: SQL = "\(typedBind: .int64Array(pairs.map(\.owner)))"
        let members: SQL = "\(typedBind: .int64Array(pairs.map(\.member)))"
        guard let positions else {
            return "INSERT INTO \(table) AS j (\(owner), \(member)) SELECT * FROM unnest(\(owners), \(members))"
                + (newOwners ? "" : " ON CONFLICT (\(owner), \(member)) DO NOTHING")
        }
        let position = SQLIdentifier(SchemaMapping.positionColumn)
        let bind = SQLBind.array(.int32, positions.map { .int32($0) })
        let insert: SQL =
            "INSERT INTO \(table) AS j (\(owner), \(member), \(position)) "
            + "SELECT * FROM unnest(\(owners), \(members), \(typedBind: bind))"
        guard !newOwners else { return insert }
        return insert + " ON CONFLICT (\(owner), \(member)) DO UPDATE SET \(position) = EXCLUDED.\(position) "
            + "WHERE j.\(position) <> EXCLUDED.\(position)"
    }

    /// For a many-to-many ordered on both sides: makes the other side's join table (`joinTable`) hold exactly
    /// the pairs just written for `owners` (given as this side's `(owner, member)`): pairs no longer listed are
    /// deleted there, new ones are appended to the end of each member's list. Two statements.
    package func mirror(joinTable: String, owners: [Int64], pairs: [(owner: Int64, member: Int64)]) -> [SQL] {
        let owner = SQLIdentifier(SchemaMapping.ownerColumn)
        let member = SQLIdentifier(SchemaMapping.memberColumn)
        let position = SQLIdentifier(SchemaMapping.positionColumn)
        let table = SQLIdentifier(joinTable, schema: schema)
        // On the other side, this side's members own and this side's owners are members (each statement binds
        // its own copy of the pair arrays).
        func flipped() -> SQL {
            "\(typedBind: .int64Array(pairs.map(\.member))), \(typedBind: .int64Array(pairs.map(\.owner)))"
        }
        let delete: SQL =
            "DELETE FROM \(table) AS j WHERE j.\(member) = ANY(\(typedBind: .int64Array(owners))) AND NOT EXISTS ("
            + "SELECT 1 FROM unnest(\(flipped())) AS n(\(owner), \(member)) "
            + "WHERE n.\(owner) = j.\(owner) AND n.\(member) = j.\(member))"
        let insert: SQL =
            "INSERT INTO \(table) (\(owner), \(member), \(position)) SELECT n.\(owner), n.\(member), "
            + "(coalesce((SELECT max(m.\(position)) FROM \(table) AS m WHERE m.\(owner) = n.\(owner)), -1) "
            + "+ row_number() OVER (PARTITION BY n.\(owner) ORDER BY n.\(SQLIdentifier("_i"))))::integer "
            + "FROM unnest(\(flipped())) WITH ORDINALITY AS n(\(owner), \(member), \(SQLIdentifier("_i"))) "
            + "WHERE NOT EXISTS (SELECT 1 FROM \(table) AS e WHERE e.\(owner) = n.\(owner) AND e.\(member) = n.\(member))"
        return [delete, insert]
    }

    private func names(_ columns: [ColumnValues]) -> SQL {
        list(columns.map { SQLIdentifier($0.name) })
    }

    private func list(_ identifiers: [SQLIdentifier]) -> SQL {
        SQL.joined(identifiers.map { "\($0)" }, separator: ", ")
    }

    /// `SELECT u."a", ... FROM unnest($1::text[], ...) WITH ORDINALITY AS u("a", ..., "_i") ORDER BY u."_i"`,
    /// or ordered by a key column first.
    private func source(_ columns: [ColumnValues], orderedBy key: Attribute? = nil) -> SQL {
        let ordinal = SQLIdentifier("_i")
        let arrays = SQL.joined(columns.map { "\(typedBind: .array($0.type, $0.values))" }, separator: ", ")
        let selected = SQL.joined(columns.map { "u.\(SQLIdentifier($0.name))" }, separator: ", ")
        var order: SQL = ""
        if let key { order = "\(Self.orderKey("u", key)), " }
        return "SELECT \(selected) FROM unnest(\(arrays)) WITH ORDINALITY AS u(\(names(columns)), \(ordinal)) "
            + "ORDER BY \(order)u.\(ordinal)"
    }
}
