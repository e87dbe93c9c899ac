@_spi(StoreImplementation) import CoreValue
import LibPQ

extension SaveExecution {
    /// Sends a group's updates: the rows to write, and a check of the rows written "unless current"
    /// (``SavePlan/Row/unlessCurrent``), which are written only if another writer moved their version on.
    /// Those go to `stale` (written after this pipeline); the check costs two arrays of keys and versions
    /// where writing every such row would send its every column, for a row that is usually current.
    func update(
        _ group: SavePlan.UpdateGroup, _ emit: Emit,
        stale: @escaping ([(key: Int64, row: SavePlan.Row)]) -> Void
    ) throws {
        // One row written (a request's save): straight to its statement, without the arrays below.
        if group.rows.count == 1, let row = group.rows.first, !row.unlessCurrent {
            return try writeOne(group, try requireKey(of: row.id), row, emit)
        }
        // Rows by position in key order: a save of many unchanged rows (each only checked) copies none of them.
        let keys = try group.rows.map { try requireKey(of: $0.id) }
        var written: [(key: Int64, row: SavePlan.Row)] = []
        var checked: [Int] = []
        for position in keys.indices.sorted(by: { keys[$0] < keys[$1] }) {
            if group.rows[position].unlessCurrent {
                checked.append(position)
            } else {
                written.append((keys[position], group.rows[position]))
            }
        }
        if !written.isEmpty { try write(group, written, emit) }
        guard !checked.isEmpty else { return }
        let entity = group.entity.name
        let checkedKeys = checked.map { keys[$0] }
        try emit(statements.versions(table: plan.mapping.tableName(of: entity), keys: checkedKeys)) {
            [self] returned in
            // The stored versions, by place in `checkedKeys` (ascending: each returned key found by bisection,
            // where a dictionary hashed every key).
            var versions = [Int64?](repeating: nil, count: checkedKeys.count)
            for row in 0..<returned.rowCount {
                let key = try BindEncoding.int64(returned, row: row, column: 0)
                guard let place = Self.place(of: key, in: checkedKeys) else {
                    throw PostgresStoreError(
                        .unexpectedResult, "a version for \(entity)/\(key), which was not asked for")
                }
                versions[place] = try BindEncoding.int64(returned, row: row, column: 1)
            }
            // A row written unless current must still exist.
            try checkConflicts(
                entity, keys: checkedKeys, missing: zip(checkedKeys, versions).compactMap { $1 == nil ? $0 : nil },
                action: "update")
            var moved: [(key: Int64, row: SavePlan.Row)] = []
            for (place, position) in checked.enumerated() where versions[place] != group.rows[position].version {
                // Written whole whatever its version now: last writer wins.
                var row = plan.materialized(group.rows[position], of: group.entity)
                row.unlessCurrent = false
                row.version = nil
                moved.append((keys[position], row))
            }
            if !moved.isEmpty { stale(moved) }
        }
    }

    /// Sends one `UPDATE` for rows of a group (in key order): one row through its one-row statement
    /// (``writeOne(_:_:_:_:)``); several with their row locks taken first in one deterministic order (see
    /// `WriteStatements.lock`), so that writers of the same rows in different input orders queue instead of
    /// deadlocking.
    func write(_ group: SavePlan.UpdateGroup, _ sorted: [(key: Int64, row: SavePlan.Row)], _ emit: Emit) throws {
        if sorted.count == 1, let (key, row) = sorted.first { return try writeOne(group, key, row, emit) }
        let rows = sorted.map(\.row)
        let keys = sorted.map(\.key)
        let lockOrder = LockOrder(attribute: group.entity.uniqueAttributes.first { !$0.isOptional })
        var columns: [ColumnValues] = []
        func flags(_ isSet: [Bool]) -> [Bool]? { isSet.allSatisfy { $0 } ? nil : isSet }
        for (position, attribute) in group.entity.attributes.enumerated()
        where rows.contains(where: { $0.attributes[at: position] != nil }) {
            columns.append(
                ColumnValues(
                    name: attribute.name, type: attribute.type,
                    values: rows.map { $0.attributes[at: position] ?? .null },
                    isSet: flags(rows.map { $0.attributes[at: position] != nil })))
        }
        for relationship in plan.mapping.foreignKeyRelationships(of: group.entity)
        where rows.contains(where: { $0.toOne[relationship.name] != nil }) {
            let values = try rows.map { row -> AttributeValue in
                guard let target = row.toOne[relationship.name] ?? nil else { return .null }
                return .int64(try requireKey(of: target))
            }
            columns.append(
                ColumnValues(
                    name: relationship.name, type: .int64, values: values,
                    isSet: flags(rows.map { $0.toOne[relationship.name] != nil })))
        }
        let sql = statements.update(
            table: plan.mapping.tableName(of: group.entity.name), keys: keys, versions: rows.map(\.version),
            columns: columns, lockOrder: lockOrder)
        try emitUpdate(sql, of: group.entity.name, keys: keys, emit)
    }

    /// Sends an `UPDATE` of `keys` and takes the versions it returns.
    private func emitUpdate(_ sql: SQL, of entity: String, keys: [Int64], _ emit: Emit) throws {
        try emit(sql) { [self] returned in
            if keys.count == 1, returned.rowCount <= 1 {
                // One row (a request's save): its key and version read straight, without the tables below.
                var version: Int64?
                if returned.rowCount == 1, try BindEncoding.int64(returned, row: 0, column: 0) == keys[0] {
                    version = try BindEncoding.int64(returned, row: 0, column: 1)
                }
                try checkConflicts(entity, keys: keys, missing: version == nil ? keys : [], action: "update")
                if let version { result.versions[.permanent(entity, keys[0])] = version }
                return
            }
            let versions = try Self.versions(returned)
            // Every row must have been written: a checked one whose version moved on, or any deleted one, was not.
            try checkConflicts(entity, keys: keys, missing: keys.filter { versions[$0] == nil }, action: "update")
            for (key, version) in versions { result.versions[.permanent(entity, key)] = version }
        }
    }

    /// ``write(_:_:_:)`` for one row (a request's save): its columns straight into the one-row statement,
    /// without the per-column arrays of a batch.
    private func writeOne(_ group: SavePlan.UpdateGroup, _ key: Int64, _ row: SavePlan.Row, _ emit: Emit) throws {
        var columns: [ColumnValue] = []
        columns.reserveCapacity(group.entity.attributes.count)
        for (position, attribute) in group.entity.attributes.enumerated() {
            guard let value = row.attributes[at: position] else { continue }
            columns.append(ColumnValue(name: attribute.name, type: attribute.type, value: value))
        }
        for relationship in plan.mapping.foreignKeyRelationships(of: group.entity) {
            guard let link = row.toOne[relationship.name] else { continue }
            let value: AttributeValue = try link.map { .int64(try requireKey(of: $0)) } ?? .null
            columns.append(ColumnValue(name: relationship.name, type: .int64, value: value))
        }
        let sql = statements.updateRow(
            table: plan.mapping.tableName(of: group.entity.name), key: key, version: row.version, columns: columns)
        try emitUpdate(sql, of: group.entity.name, keys: [key], emit)
    }

    /// The index of `key` in `sorted` (ascending), by bisection; `nil` if it is not there.
    private static func place(of key: Int64, in sorted: [Int64]) -> Int? {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = low + (high - low) / 2
            if sorted[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count && sorted[low] == key ? low : nil
    }

    /// The `("_pk", "_version")` rows a statement returned, by key.
    static func versions(_ returned: QueryResult) throws -> [Int64: Int64] {
        var versions: [Int64: Int64] = [:]
        versions.reserveCapacity(returned.rowCount)
        for row in 0..<returned.rowCount {
            versions[try BindEncoding.int64(returned, row: row, column: 0)] =
                try BindEncoding.int64(returned, row: row, column: 1)
        }
        return versions
    }

    func relink(_ group: SavePlan.LinkGroup, _ emit: Emit) throws {
        var owners: [Int64] = []
        var pairs: [(owner: Int64, member: Int64)] = []
        var positions: [Int32] = []
        // Owners in key order, so that concurrent saves write join rows in one order.
        let changes = try group.changes.map { (key: try requireKey(of: $0.owner), members: $0.members) }
            .sorted { $0.key < $1.key }
        for change in changes {
            let owner = change.key
            owners.append(owner)
            var seen = Set<Int64>()
            for member in change.members {
                let key = try requireKey(of: member)
                guard seen.insert(key).inserted else { continue }
                pairs.append((owner, key))
                positions.append(Int32(truncatingIfNeeded: seen.count - 1))
            }
        }
        let table = plan.mapping.joinTableName(of: group.relationship, in: group.entity)
        let detach = plan.mapping.model.inverse(of: group.relationship).map { !$0.relationship.isToMany } ?? false
        try emit(statements.unlink(joinTable: table, owners: owners, pairs: pairs, detachMembers: detach)) { _ in }
        let ordered = group.relationship.kind == .orderedToMany
        // Both sides ordered: each has its own table, and this side's writes keep the other one holding the
        // same pairs (so this table, too, may get rows from the other side's owners in the same save).
        var mirrored: (entity: Entity, relationship: Relationship)?
        if ordered, let inverse = plan.mapping.model.inverse(of: group.relationship),
            inverse.relationship.kind == .orderedToMany
        {
            mirrored = inverse
        }
        if !pairs.isEmpty {
            // Owners this save inserted have no join rows yet (unless the other side's mirror wrote some): their
            // links go in without ON CONFLICT. The unlink above still runs (it detaches members from other
            // owners, and it leaves nothing of an owner misjudged new for the plain insert to duplicate
            // silently: a pair left over fails it).
            let newOwners = mirrored == nil && group.changes.allSatisfy { isInsertedRow($0.owner) }
            try emit(
                statements.link(
                    joinTable: table, pairs: pairs, positions: ordered ? positions : nil, newOwners: newOwners)
            ) { _ in }
        }
        if let inverse = mirrored {
            let other = plan.mapping.joinTableName(of: inverse.relationship, in: inverse.entity)
            for statement in statements.mirror(joinTable: other, owners: owners, pairs: pairs) {
                try emit(statement) { _ in }
            }
        }
    }

    func delete(_ group: SavePlan.DeleteGroup, _ emit: Emit) throws {
        let sorted = zip(group.keys, group.versions).sorted { $0.0 < $1.0 }
        let sql = statements.delete(
            from: plan.mapping.tableName(of: group.entity.name), keys: sorted.map(\.0), versions: sorted.map(\.1))
        try emit(sql) { [self] returned in
            var found = Set<Int64>()
            for row in 0..<returned.rowCount { found.insert(try BindEncoding.int64(returned, row: row, column: 0)) }
            try checkConflicts(
                group.entity.name, keys: group.keys, missing: group.keys.filter { !found.contains($0) },
                action: "delete")
        }
    }

    /// Fails the save when rows among `keys` were not found (`missing`).
    private func checkConflicts(_ entity: String, keys: [Int64], missing: [Int64], action: String) throws {
        guard !missing.isEmpty else { return }
        let names = missing.prefix(10).map { "\(entity)/\($0)" }.joined(separator: ", ")
        throw CVManagedStructError.conflict(
            entity: entity,
            message: "cannot \(action) \(missing.count) of \(keys.count) rows: changed or deleted by another writer "
                + "since they were read (\(names)\(missing.count > 10 ? ", ..." : ""))")
    }
}
