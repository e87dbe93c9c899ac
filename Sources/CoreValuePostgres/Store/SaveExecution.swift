@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Runs a ``SavePlan`` inside one transaction: inserts and upserts, foreign keys to rows inserted later,
/// updates, join-table rewrites, deletes. Any failure throws, and the caller's transaction rolls back.
final class SaveExecution {
    /// Where a statement goes and what becomes of its result: run at once (``run()``), or sent in a pipeline
    /// and handled when its result arrives (``sendInserts(_:)``, a streamed save).
    typealias Emit = StatementRunner.Emit

    let plan: SavePlan
    let statements: WriteStatements
    let runner: StatementRunner
    /// Where the keys and versions written go: one per save, shared by the executions of a streamed
    /// save's parts, so that their results are never merged.
    final class Recorder {
        var result = SaveResult()
    }

    private let recorder: Recorder
    private var result: SaveResult {
        get { recorder.result }
        _modify { yield &recorder.result }
    }

    /// For a part of a streamed save whose inserts are one group, in the order handed over: the stream
    /// position of its first insert. Its rows' keys and versions are then recorded by position
    /// (``SaveResult/streamedInserts``), not in two tables keyed by ID.
    private var streamPosition: Int?

    /// A foreign key of a new row whose destination was not inserted yet when the row was.
    private struct PendingLink {
        var entity: String
        var column: String
        var source: ManagedObjectID
        var target: ManagedObjectID
    }

    /// Whether the plan's upserts are sent as plain inserts (``WriteStatements/insertNew(into:key:columns:)``):
    /// for a streamed save whose store found no row that could share an identifier with them.
    private let insertsNew: Bool

    init(
        plan: SavePlan, statements: WriteStatements, runner: StatementRunner, recorder: Recorder = Recorder(),
        insertsNew: Bool = false
    ) {
        self.insertsNew = insertsNew
        self.recorder = recorder
        self.plan = plan
        self.statements = statements
        self.runner = runner
    }

    /// Runs every statement of the plan.
    ///
    /// - Throws: `CVManagedStructError.conflict` when an update or delete finds a newer version or no row;
    ///   server errors.
    func run() throws -> SaveResult {
        try lockMixedUniqueRows()
        var pending: [PendingLink] = []
        let runner = runner
        try insertAll({ sql, handle in try handle(runner.run(sql)) }, pending: &pending)
        try link(pending)
        // The updates, member lists and deletes need nothing but keys known by now: they go in one pipeline
        // (one round trip, the server running one while the next is encoded), and each result is checked as
        // it arrives. A conflict still fails the save before COMMIT, as when they ran one by one.
        guard !plan.updates.isEmpty || !plan.links.isEmpty || !plan.deletes.isEmpty else { return result }
        var stale: [(group: SavePlan.UpdateGroup, rows: [(key: Int64, row: SavePlan.Row)])] = []
        try runner.pipelined { emit in
            for group in plan.updates {
                try update(group, emit) { rows in stale.append((group, rows)) }
            }
            for group in plan.links { try relink(group, emit) }
            for group in plan.deletes { try delete(group, emit) }
        }
        // Rows written "unless current" that another writer moved on: written now, whole, as any other write
        // (one more round trip, only when such rows exist).
        guard !stale.isEmpty else { return result }
        try runner.pipelined { emit in
            for (group, rows) in stale { try write(group, rows, emit) }
        }
        return result
    }

    /// Sends the plan's inserts and upserts through `emit` (a pipeline) without waiting for their results:
    /// the part of a streamed save. The keys and versions are in the recorder once every result was handled.
    ///
    /// - Throws: `CVManagedStructError.invalidObject` for a plan with anything but inserts of rows without
    ///   foreign keys (what a streamed part may hold); what `emit` throws.
    ///
    /// `position` is the stream position of the part's first insert (how many inserts the parts before it
    /// held): with it, the part's results are recorded by position where its plan keeps the inserts in
    /// order (one group), and by ID otherwise.
    func sendInserts(_ emit: Emit, at position: Int? = nil) throws {
        guard plan.updates.isEmpty, plan.links.isEmpty, plan.deletes.isEmpty else {
            throw CVManagedStructError.invalidObject(
                message: "a part of a streamed save may only insert rows; it has updates, deletes or member lists")
        }
        if let position {
            // Every part takes its positions, recorded by position or not, so that later parts' line up.
            let end = position + plan.insertCount
            if result.streamedInserts.count < end {
                result.streamedInserts.append(contentsOf: repeatElement(nil, count: end - result.streamedInserts.count))
            }
            // One group holds the part's inserts in the order they were handed over (SavePlan appends rows
            // to their group in order).
            if plan.inserts.count == 1 { streamPosition = position }
        }
        var pending: [PendingLink] = []
        try insertAll(emit, pending: &pending)
        guard pending.isEmpty else {
            throw CVManagedStructError.invalidObject(
                message: "a part of a streamed save may only insert rows whose foreign keys are known")
        }
    }

    private func insertAll(_ emit: Emit, pending: inout [PendingLink]) throws {
        for group in plan.inserts {
            if let key = group.upsertKey {
                try upsert(group, key: key, emit, pending: &pending)
            } else {
                try insert(group, emit, pending: &pending)
            }
        }
    }

    /// When one save both upserts and updates rows of a unique entity (rows new to this context and rows it
    /// already holds), each statement would lock its own rows in order, but two processes splitting the same
    /// rows the other way round could still wait on each other. So the existing rows of both sets are locked
    /// first, together, in identifier order (the order each statement uses too).
    private func lockMixedUniqueRows() throws {
        for update in plan.updates {
            let upserts = plan.inserts.filter { $0.entity.name == update.entity.name && $0.upsertKey != nil }
            guard let key = upserts.first?.upsertKey, upserts.allSatisfy({ $0.upsertKey?.name == key.name }) else {
                continue
            }
            // Updates that don't carry the identifier (a persistent struct's changed columns) lock by key later.
            // A row written unless current holds its changes' values as given (`SavePlan.Row.deferred`).
            var values = try update.rows.compactMap { row in
                try row.value(of: key.name).flatMap { $0.isNull ? nil : $0 }.map {
                    try ValueCoercion.coerce($0, to: key, in: update.entity.name)
                }
            }
            guard values.count == update.rows.count else { continue }
            for group in upserts { values += group.rows.compactMap { $0.attributes[key.name] } }
            try runner.run(statements.lock(table: update.entity.name, identifiers: values, of: key))
        }
    }

    private func key(of id: ManagedObjectID) -> Int64? {
        id.primaryKey ?? result.permanentIDs[id]?.primaryKey
    }

    /// Whether this save inserted the object's row: it had a temporary ID, and its row came back at the
    /// first version (an upsert that updated a stored row returns the next one, 2 or more).
    private func isInsertedRow(_ id: ManagedObjectID) -> Bool {
        guard id.isTemporary, let permanent = result.permanentIDs[id] else { return false }
        return result.versions[permanent] == 1
    }

    private func requireKey(of id: ManagedObjectID) throws -> Int64 {
        guard let key = key(of: id) else {
            throw CVManagedStructError.invalidObject(message: "\(id) is neither saved nor inserted by this save")
        }
        return key
    }

    /// The columns of new rows: attributes some row sets (others get the model default or NULL), then
    /// foreign keys some row sets (destinations not yet inserted are linked later).
    private func insertColumns(_ entity: Entity, _ rows: ArraySlice<SavePlan.Row>, pending: inout [PendingLink])
        -> [ColumnValues]
    {
        var columns: [ColumnValues] = []
        // Rows are in the entity's layout (SavePlan): position i is `entity.attributes[i]`.
        for (position, attribute) in entity.attributes.enumerated()
        where rows.contains(where: { $0.attributes[at: position] != nil }) {
            let values = rows.map { $0.attributes[at: position] ?? attribute.defaultValue ?? .null }
            columns.append(ColumnValues(name: attribute.name, type: attribute.type, values: values))
        }
        for relationship in plan.mapping.foreignKeyRelationships(of: entity)
        where rows.contains(where: { $0.toOne[relationship.name] != nil }) {
            let values = rows.map { row -> AttributeValue in
                guard let target = row.toOne[relationship.name] ?? nil else { return .null }
                if let key = key(of: target) { return .int64(key) }
                pending.append(
                    PendingLink(entity: entity.name, column: relationship.name, source: row.id, target: target))
                return .null
            }
            columns.append(ColumnValues(name: relationship.name, type: .int64, values: values))
        }
        return columns
    }

    /// The most rows one insert or upsert statement carries. A save of more rows of one entity sends one
    /// statement per this many, in its one transaction: the column arrays, their encoding, libpq's copy and
    /// the returned rows are then held for one statement's rows at a time, not for the whole save.
    static let rowsPerStatement = ManagedObjectContext.batchSize

    /// `0..<count` cut into ranges of at most `size` (one range for no rows, as for one statement).
    static func chunks(_ count: Int, size: Int = rowsPerStatement) -> [Range<Int>] {
        guard count > size else { return [0..<count] }
        return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
    }

    private func insert(_ group: SavePlan.InsertGroup, _ emit: Emit, pending: inout [PendingLink]) throws {
        for range in Self.chunks(group.rows.count) {
            let rows = group.rows[range]
            let entity = group.entity
            let columns = insertColumns(entity, rows, pending: &pending)
            try emit(statements.insert(into: entity.name, columns: columns, rowCount: rows.count)) { [self] in
                try inserted(entity, rows, $0)
            }
        }
    }

    private func inserted(_ entity: Entity, _ rows: ArraySlice<SavePlan.Row>, _ returned: QueryResult) throws {
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

    private func upsert(_ group: SavePlan.InsertGroup, key: Attribute, _ emit: Emit, pending: inout [PendingLink])
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
            let sql =
                insertsNew
                ? statements.insertNew(into: entity.name, key: key, columns: columns)
                : statements.upsert(into: entity.name, key: key, columns: columns)
            try emit(sql) { returned in
                try Self.upserted(entity, key, returned, matched, sink)
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
        _ entity: Entity, _ key: Attribute, _ returned: QueryResult, _ matched: UpsertedRows, _ sink: ResultSink
    ) throws {
        let written = try writtenRows(entity, key, returned, matched.values)
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
    /// - Throws: ``PostgresStoreError/Code/unexpectedResult`` for an identifier no returned row holds.
    private static func writtenRows(
        _ entity: Entity, _ key: Attribute, _ returned: QueryResult, _ values: [ExactValue]
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
                throw PostgresStoreError(
                    .unexpectedResult, "upserting \(entity.name) returned no row for one of its '\(key.name)' values")
            }
            return keyAndVersion
        }
    }

    private func link(_ pending: [PendingLink]) throws {
        var order: [String] = []
        var groups: [String: [PendingLink]] = [:]
        for link in pending {
            let group = link.entity + "\u{0}" + link.column
            if groups[group] == nil { order.append(group) }
            groups[group, default: []].append(link)
        }
        for group in order {
            guard let links = groups[group], let first = links.first else { continue }
            try runner.run(
                statements.link(
                    table: first.entity, column: first.column, keys: try links.map { try requireKey(of: $0.source) },
                    targets: try links.map { try requireKey(of: $0.target) }))
        }
    }

    /// Sends a group's updates: the rows to write, and a check of the rows written "unless current"
    /// (``SavePlan/Row/unlessCurrent``), which are written only if another writer moved their version on.
    /// Those go to `stale` (written after this pipeline); the check costs two arrays of keys and versions
    /// where writing every such row would send its every column, for a row that is usually current.
    private func update(
        _ group: SavePlan.UpdateGroup, _ emit: Emit,
        stale: @escaping ([(key: Int64, row: SavePlan.Row)]) -> Void
    ) throws {
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
        try emit(statements.versions(table: entity, keys: checkedKeys)) { [self] returned in
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
                var row = try plan.materialized(group.rows[position])
                row.unlessCurrent = false
                row.version = nil
                moved.append((keys[position], row))
            }
            if !moved.isEmpty { stale(moved) }
        }
    }

    /// Sends one `UPDATE` for rows of a group (in key order), with the row locks taken first in one
    /// deterministic order (see `WriteStatements.lock`): writers of the same rows in different input orders
    /// then queue instead of deadlocking.
    private func write(_ group: SavePlan.UpdateGroup, _ sorted: [(key: Int64, row: SavePlan.Row)], _ emit: Emit) throws
    {
        let rows = sorted.map(\.row)
        let keys = sorted.map(\.key)
        let lockOrder =
            rows.count > 1 ? LockOrder(attribute: group.entity.uniqueAttributes.first { !$0.isOptional }) : nil
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
            table: group.entity.name, keys: keys, versions: rows.map(\.version), columns: columns, lockOrder: lockOrder)
        let entity = group.entity.name
        try emit(sql) { [self] returned in
            let versions = try Self.versions(returned)
            // Every row must have been written: a checked one whose version moved on, or any deleted one, was not.
            try checkConflicts(entity, keys: keys, missing: keys.filter { versions[$0] == nil }, action: "update")
            for (key, version) in versions { result.versions[.permanent(entity, key)] = version }
        }
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
    private static func versions(_ returned: QueryResult) throws -> [Int64: Int64] {
        var versions: [Int64: Int64] = [:]
        versions.reserveCapacity(returned.rowCount)
        for row in 0..<returned.rowCount {
            versions[try BindEncoding.int64(returned, row: row, column: 0)] =
                try BindEncoding.int64(returned, row: row, column: 1)
        }
        return versions
    }

    private func relink(_ group: SavePlan.LinkGroup, _ emit: Emit) throws {
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
        let table = SchemaMapping.joinTableName(entity: group.entity.name, relationship: group.relationship.name)
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
            let other = SchemaMapping.joinTableName(
                entity: inverse.entity.name, relationship: inverse.relationship.name)
            for statement in statements.mirror(joinTable: other, owners: owners, pairs: pairs) {
                try emit(statement) { _ in }
            }
        }
    }

    private func delete(_ group: SavePlan.DeleteGroup, _ emit: Emit) throws {
        let sorted = zip(group.keys, group.versions).sorted { $0.0 < $1.0 }
        let sql = statements.delete(from: group.entity.name, keys: sorted.map(\.0), versions: sorted.map(\.1))
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
