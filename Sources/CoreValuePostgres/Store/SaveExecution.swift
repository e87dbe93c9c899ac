@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Sends one ``SavePlan``'s statements for ``WriteExecutor``, inside its transaction: inserts and upserts,
/// foreign keys to rows inserted later, updates, join-table rewrites, deletes. Any failure throws, and the
/// caller's transaction rolls back.
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

    let recorder: Recorder
    var result: SaveResult {
        get { recorder.result }
        _modify { yield &recorder.result }
    }

    /// For a part of a streamed save whose inserts are one group, in the order handed over: the stream
    /// position of its first insert. Its rows' keys and versions are then recorded by position
    /// (``SaveResult/streamedInserts``), not in two tables keyed by ID.
    var streamPosition: Int?

    /// A foreign key of a new row whose destination was not inserted yet when the row was.
    struct PendingLink {
        var entity: String
        var column: String
        var source: ManagedObjectID
        var target: ManagedObjectID
    }

    /// Whether the plan's upserts are sent as plain inserts (``WriteStatements/insertNew(into:key:columns:)``):
    /// for a streamed save whose store found no row that could share an identifier with them.
    let insertsNew: Bool

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
    func run(mayCommitWithLastStatement: Bool = false) throws -> SaveResult {
        if mayCommitWithLastStatement, isOneRowStatement { runner.commitWithNextStatement() }
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

    /// Whether the plan is one statement for one row whose effect may stand whatever its result: an upsert,
    /// an update or a delete of one row (a version check that fails writes nothing, and the row's other
    /// checks run before it is sent). Its transaction's `COMMIT` can then go in the same pipeline: the
    /// request path's save in one round trip.
    var isOneRowStatement: Bool {
        let rows =
            plan.insertCount + plan.updates.reduce(0) { $0 + $1.rows.count }
            + plan.deletes.reduce(0) { $0 + $1.keys.count }
        guard rows == 1, plan.links.isEmpty else { return false }
        // A foreign key to an object not saved yet would need a second statement.
        func knowsTargets(_ row: SavePlan.Row) -> Bool { row.toOne.values.allSatisfy { $0?.isTemporary != true } }
        if let group = plan.inserts.first { return group.upsertKey != nil && group.rows.allSatisfy(knowsTargets) }
        if let group = plan.updates.first { return group.rows.allSatisfy { !$0.unlessCurrent && knowsTargets($0) } }
        return true
    }

    /// Sends the plan's inserts and upserts through `emit` (a pipeline) without waiting for their results:
    /// the part of a streamed save. The keys and versions are in the recorder once every result was handled.
    ///
    /// The plan holds inserts only (`PartSource` checked it). - Throws: `CVManagedStructError.invalidObject`
    /// for a row whose foreign key points at a row not saved yet; what `emit` throws.
    ///
    /// `position` is the stream position of the part's first insert (how many inserts the parts before it
    /// held): with it, the part's results are recorded by position where its plan keeps the inserts in
    /// order (one group), and by ID otherwise.
    func sendInserts(_ emit: Emit, at position: Int? = nil) throws {
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
            // Resolved values: of the key's type already, deferred changes' too (`SavePlan.Row.deferred`).
            var values = update.rows.compactMap { row in row.value(of: key.name).flatMap { $0.isNull ? nil : $0 } }
            guard values.count == update.rows.count else { continue }
            for group in upserts { values += group.rows.compactMap { $0.attributes[key.name] } }
            try runner.run(
                statements.lock(table: plan.mapping.tableName(of: update.entity.name), identifiers: values, of: key))
        }
    }

    func key(of id: ManagedObjectID) -> Int64? {
        id.primaryKey ?? result.permanentIDs[id]?.primaryKey
    }

    /// Whether this save inserted the object's row: it had a temporary ID, and its row came back at the
    /// first version (an upsert that updated a stored row returns the next one, 2 or more).
    func isInsertedRow(_ id: ManagedObjectID) -> Bool {
        guard id.isTemporary, let permanent = result.permanentIDs[id] else { return false }
        return result.versions[permanent] == 1
    }

    func requireKey(of id: ManagedObjectID) throws -> Int64 {
        guard let key = key(of: id) else {
            throw CVManagedStructError.invalidObject(message: "\(id) is neither saved nor inserted by this save")
        }
        return key
    }

    /// The columns of new rows: attributes some row sets (others get the model default or NULL), then
    /// foreign keys some row sets (destinations not yet inserted are linked later).
    func insertColumns(_ entity: Entity, _ rows: ArraySlice<SavePlan.Row>, pending: inout [PendingLink])
        -> [ColumnValues]
    {
        var columns: [ColumnValues] = []
        // In a hierarchy's table, each row names its entity.
        if plan.mapping.isHierarchical(entity.name) {
            columns.append(
                ColumnValues(
                    name: SchemaMapping.entityColumn, type: .string,
                    values: Array(repeating: .string(entity.name), count: rows.count)))
        }
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

    func link(_ pending: [PendingLink]) throws {
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
                    table: plan.mapping.tableName(of: first.entity), column: first.column,
                    keys: try links.map { try requireKey(of: $0.source) },
                    targets: try links.map { try requireKey(of: $0.target) }))
        }
    }

}
