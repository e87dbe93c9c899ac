@_spi(StoreImplementation) import CoreValue
import LibPQ

extension SaveExecution {
    func insert(_ group: SavePlan.InsertGroup, _ emit: Emit, pending: inout [PendingLink]) throws {
        for range in Self.chunks(group.rows.count) {
            let rows = group.rows[range]
            let entity = group.entity
            let columns = insertColumns(entity, rows, pending: &pending)
            let table = plan.mapping.tableName(of: entity.name)
            try emit(statements.insert(into: table, columns: columns, rowCount: rows.count)) { [self] in
                try inserted(entity, rows, $0)
            }
        }
    }

    func inserted(_ entity: Entity, _ rows: ArraySlice<SavePlan.Row>, _ returned: QueryResult) throws {
        var written: [(key: Int64, version: Int64)] = []
        written.reserveCapacity(returned.rowCount)
        for row in 0..<returned.rowCount {
            written.append(
                (
                    try BindEncoding.int64(returned, row: row, column: 0),
                    try BindEncoding.int64(returned, row: row, column: 1)
                ))
        }
        guard written.count == rows.count else {
            throw PostgresStoreError(
                .unexpectedResult, "inserting \(rows.count) \(entity.name) rows returned \(written.count)")
        }
        // Rows are inserted in input order, so their identity keys ascend in input order.
        written.sort { $0.key < $1.key }
        for (index, stored) in zip(rows.indices, written) {
            sink.record(rows[index].id, row: index, entity.name, stored.key, stored.version)
        }
    }

    func upsert(_ group: SavePlan.InsertGroup, key: Attribute, _ emit: Emit, pending: inout [PendingLink])
        throws
    {
        // One row per identifier value: the first occurrence's position, the last occurrence's values.
        // Every table sized for the rows at once: growing them row by row was a tenth of the upsert's time.
        // Rows are not copied: a merged row is kept apart only for an identifier that several rows share.
        let rows = group.rows
        var firsts: [Int] = []
        firsts.reserveCapacity(rows.count)
        var position: [ExactValue: Int] = Dictionary(minimumCapacity: rows.count)
        // By index in `firsts`, only for identifiers that several rows share: the merged row, and the other
        // objects that share it.
        var combined: [Int: SavePlan.Row] = [:]
        var sharers: [Int: [ManagedObjectID]] = [:]
        let keyPosition = group.entity.attributes.firstIndex { $0.name == key.name }
        // Each identifier's value, by index in `firsts`: what the result is matched against.
        var identifiers: [ExactValue] = []
        identifiers.reserveCapacity(rows.count)
        // By index, not `enumerated()`: that copied every row (retaining each of its fields) to read one value.
        for offset in rows.indices {
            let value = ExactValue(keyPosition.flatMap { rows[offset].attributes[at: $0] } ?? .null)
            if let index = position[value] {
                let row = rows[offset]
                combined[index, default: rows[firsts[index]]].attributes.merge(row.attributes)
                combined[index, default: rows[firsts[index]]].toOne.merge(row.toOne) { $1 }
                sharers[index, default: []].append(row.id)
            } else {
                position[value] = firsts.count
                firsts.append(offset)
                identifiers.append(value)
            }
        }
        position = [:]
        func merged(_ index: Int) -> SavePlan.Row { combined[index] ?? rows[firsts[index]] }
        if streamPosition == nil {
            result.permanentIDs.reserveGrowing(result.permanentIDs.count + rows.count)
            result.versions.reserveGrowing(result.versions.count + firsts.count)
        }
        // More rows than one statement carries go in several statements, in the order the server locks
        // rows (each statement sorts its rows by key): two savers of overlapping rows then lock them in one
        // order across their statements too, as within one, and cannot deadlock each other. A key type whose
        // server order the client can't reproduce keeps one statement.
        var order = Array(firsts.indices)
        var ranges = [order.startIndex..<order.endIndex]
        if firsts.count > Self.rowsPerStatement, ValueOrder.matchesServerOrder(key.type), keyPosition != nil {
            // Compared by the identifiers read above, not through the rows (each comparison copied two).
            order.sort { ValueOrder.sortOrder(identifiers[$0].value, identifiers[$1].value, ascending: true) < 0 }
            ranges = Self.chunks(order.count)
        }
        let sink = sink
        for range in ranges {
            let indices = order[range]
            let batch = ranges.count == 1 && combined.isEmpty ? rows[...] : ArraySlice(indices.map(merged))
            let columns = insertColumns(group.entity, batch, pending: &pending)
            let entity = group.entity
            // What the result is matched against, and nothing more: the plan (every row, every value) is
            // released once its statements are sent, while a pipeline's results are read only at its end.
            var matched = UpsertedRows(
                values: indices.map { identifiers[$0] }, rows: indices.map { firsts[$0] },
                ids: sink.streamPosition == nil ? indices.map { rows[firsts[$0]].id } : [], sharers: [:])
            if !sharers.isEmpty {
                for (offset, index) in indices.enumerated() { matched.sharers[offset] = sharers[index] }
            }
            let table = plan.mapping.tableName(of: entity.name)
            let sql =
                insertsNew
                ? statements.insertNew(into: table, key: key, columns: columns)
                : statements.upsert(into: table, key: key, columns: columns)
            let hierarchical = plan.mapping.isHierarchical(entity.name)
            try emit(sql) { returned in
                try Self.upserted(entity, key, returned, matched, sink, hierarchical: hierarchical)
            }
        }
    }

    /// The rows of one upsert statement, as its result is matched against them: per row, the identifier's
    /// value, the row's index in its group (its stream position), its object's ID (only where results are
    /// recorded by ID) and the IDs of the other objects that share its row.
    private struct UpsertedRows {
        var values: [ExactValue]
        var rows: [Int]
        var ids: [ManagedObjectID]
        var sharers: [Int: [ManagedObjectID]]
    }

    /// Where an execution records the keys and versions written.
    private struct ResultSink {
        let recorder: Recorder
        let streamPosition: Int?

        /// Records an inserted row's key and version: by stream position for the row at index `row` of a
        /// part's one group (``SaveExecution/streamPosition``), in the tables keyed by ID otherwise.
        func record(_ temporary: ManagedObjectID?, row: Int?, _ entity: String, _ key: Int64, _ version: Int64) {
            if let start = streamPosition, let row {
                recorder.result.streamedInserts[start + row] = SaveResult.StoredRow(primaryKey: key, version: version)
                return
            }
            // Kept whenever the result is not recorded by position (`UpsertedRows.ids`).
            guard let temporary else { return }
            let permanent = ManagedObjectID.permanent(entity, key)
            recorder.result.permanentIDs[temporary] = permanent
            recorder.result.versions[permanent] = version
        }
    }

    private var sink: ResultSink { ResultSink(recorder: recorder, streamPosition: streamPosition) }

    /// Records the keys and versions an upsert returned for the rows of its statement (each an identifier's
    /// first occurrence, with the other objects that share it).
    private static func upserted(
        _ entity: Entity, _ key: Attribute, _ returned: QueryResult, _ matched: UpsertedRows, _ sink: ResultSink,
        hierarchical: Bool
    ) throws {
        let written = try writtenRows(entity, key, returned, matched.values, hierarchical: hierarchical)
        for (offset, written) in written.enumerated() {
            let id = offset < matched.ids.count ? matched.ids[offset] : nil
            sink.record(id, row: matched.rows[offset], entity.name, written.key, written.version)
            for other in matched.sharers[offset] ?? [] {
                sink.record(other, row: nil, entity.name, written.key, written.version)
            }
        }
    }

    /// The key and version written for each identifier of `values`, in their order.
    ///
    /// The rows usually come back in the order they were sent (the statement inserts them sorted by key, and
    /// a part's rows are sent in that order): matched row by row, with no table of them. Any other order is
    /// matched by value.
    ///
    /// - Throws: ``PostgresStoreError/Code/unexpectedResult`` for an identifier no returned row holds;
    ///   `CVManagedStructError.constraintViolation` for one in a hierarchy's table (`hierarchical`), where
    ///   the upsert leaves another entity's row with it alone.
    private static func writtenRows(
        _ entity: Entity, _ key: Attribute, _ returned: QueryResult, _ values: [ExactValue], hierarchical: Bool
    ) throws -> [(key: Int64, version: Int64)] {
        func cell(_ row: Int) throws -> (value: ExactValue, written: (key: Int64, version: Int64)) {
            (
                ExactValue(try BindEncoding.attributeValue(returned, row: row, column: 2, type: key.type)),
                (
                    try BindEncoding.int64(returned, row: row, column: 0),
                    try BindEncoding.int64(returned, row: row, column: 1)
                )
            )
        }
        var written: [(key: Int64, version: Int64)] = []
        written.reserveCapacity(values.count)
        if returned.rowCount == values.count {
            for row in 0..<returned.rowCount {
                let (value, keyAndVersion) = try cell(row)
                guard value == values[row] else { break }
                written.append(keyAndVersion)
            }
            if written.count == values.count { return written }
        }
        var stored: [ExactValue: (key: Int64, version: Int64)] = Dictionary(minimumCapacity: returned.rowCount)
        for row in 0..<returned.rowCount {
            let (value, keyAndVersion) = try cell(row)
            stored[value] = keyAndVersion
        }
        return try values.map { value in
            guard let keyAndVersion = stored[value] else {
                // In a hierarchy's table the upsert leaves a row of another entity with the value alone: the
                // value is taken across the hierarchy, as a unique value is.
                if hierarchical {
                    throw CVManagedStructError.constraintViolation(
                        entity: entity.name, key: key.name,
                        message:
                            "duplicate value for a unique attribute: a row of another entity of the hierarchy has it")
                }
                throw PostgresStoreError(
                    .unexpectedResult, "upserting \(entity.name) returned no row for one of its '\(key.name)' values")
            }
            return keyAndVersion
        }
    }
}
