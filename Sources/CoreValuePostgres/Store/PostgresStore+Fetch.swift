@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ
import Synchronization

extension PostgresStore {
    /// The stored rows that match a request, in the request's order, with every relationship's keys.
    ///
    /// Sends one statement: each row carries the keys of the relationships not stored as its own foreign
    /// keys as arrays.
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` / `.unknownKey` / `.typeMismatch` before anything is
    ///   sent; ``PostgresStoreError`` for a NUL character, and wrapping the server's or the driver's errors.
    @_spi(StoreImplementation) public func fetch(_ request: FetchRequest) throws -> [RowSnapshot] {
        // The shared checks first (the same MemoryStore and contexts apply): keys, operand types converted
        // without loss, sort keys, window; then the SQL compiler's own (NUL bytes, identifiers).
        let request = try request.validated(in: model)
        // The entity from its reader: one lookup by name for both.
        let reader = try readers.reader(named: request.entityName)
        let entity = reader.entity
        if mapping.isHierarchical(entity.name) { return try fetchHierarchy(request) }
        let sql = try fetchStatements.rows(for: request, of: entity, hierarchical: false)
        if Self.returnsFewRows(request, entity) { return try readFew(sql, reader) }
        return try read([(entity, sql)])
    }

    /// The most rows a read is known to return for it to be sent as a (cached, prepared) `SELECT` rather
    /// than a COPY: COPY pays off in rows, a prepared statement in calls.
    static let fewRows = 64

    /// Whether a request returns at most ``fewRows`` rows: a small fetch limit, or a unique attribute equal
    /// to one value or in a short list (a request's read by identifier), alone or in a top-level `AND`.
    static func returnsFewRows(_ request: FetchRequest, _ entity: Entity) -> Bool {
        if let limit = request.fetchLimit, limit <= fewRows { return true }
        func unique(_ key: String) -> Bool { entity.attributes.contains { $0.name == key && $0.isUnique } }
        func bounded(_ predicate: CVPredicate) -> Bool {
            switch predicate {
            case .comparison(let key, .equal, _): return unique(key)
            case .isIn(let key, let values): return values.count <= fewRows && unique(key)
            case .false: return true
            default: return false
            }
        }
        switch request.predicate {
        case .and(let terms)?: return terms.contains(where: bounded)
        case let predicate?: return bounded(predicate)
        case nil: return false
        }
    }

    /// The rows of ``fetch(_:)-(FetchRequest)``, read the same way (one statement, row by row as they
    /// arrive), handed to `body` in parts of at most ``rowsPerPart`` rows, each as soon as its last row was
    /// read: the caller registers and unboxes a part while the server sends the next. A retry after a lost
    /// connection calls `body` with `.restart` before the rows come again.
    ///
    /// With a pool of one connection, the parts are handed over once the read is done and the connection is
    /// back in the pool, so that `body` can read through the store too.
    ///
    /// - Throws: As ``fetch(_:)-(FetchRequest)``; what `body` throws.
    @_spi(StoreImplementation) public func fetch(
        _ request: FetchRequest, inParts body: (FetchedPart) throws -> Void
    ) throws {
        let request = try request.validated(in: model)
        let reader = try readers.reader(named: request.entityName)
        let entity = reader.entity
        if mapping.isHierarchical(entity.name) {
            let rows = try fetchHierarchy(request)
            if !rows.isEmpty { try body(.rows(rows)) }
            return
        }
        let sql = try fetchStatements.rows(for: request, of: entity, hierarchical: false)
        let few = Self.returnsFewRows(request, entity)
        // A few rows (a request's read by identifier) come in one result: nothing to overlap, handed over
        // whole once the connection is back in the pool.
        if few {
            let rows = try readFew(sql, reader)
            if !rows.isEmpty { try body(.rows(rows)) }
            return
        }
        guard configuration.poolSize > 1 else {
            for part in try read([(entity, sql)], inPartsOf: Self.rowsPerPart) where !part.isEmpty {
                try body(.rows(part))
            }
            return
        }
        let size = Self.rowsPerPart
        var attempts = 0
        try withReadRunner(needsTransaction: false) { runner in
            attempts += 1
            if attempts > 1 { try body(.restart) }
            var part: [RowSnapshot] = []
            part.reserveCapacity(size)
            // Each full part is handed over from inside the read.
            try readRows(sql, reader, runner, into: &part, size: size, few: false) {
                full in
                var handed: [RowSnapshot] = []
                handed.reserveCapacity(size)
                swap(&handed, &full)
                try body(.rows(handed))
            }
            if !part.isEmpty { try body(.rows(part)) }
        }
    }

    /// The rows of one part of ``fetch(_:inParts:)``: small enough that registering and unboxing the last
    /// part, after the server sent it, is a small share of a large fetch.
    static let rowsPerPart = 1_024

    /// How many stored rows match a request, with one `SELECT count(*)`.
    ///
    /// - Throws: As ``fetch(_:)-(FetchRequest)``.
    @_spi(StoreImplementation) public func count(_ request: FetchRequest) throws -> Int {
        let request = try request.validated(in: model)
        let sql = try fetchStatements.count(for: request)
        return try withReadRunner(needsTransaction: false) { runner in
            Int(try runner.run(sql).decode(Int64.self, row: 0, column: 0))
        }
    }

    /// The stored rows for these IDs, grouped into one statement per entity.
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` for an entity not in the model; server errors.
    @_spi(StoreImplementation) public func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] {
        var order: [String] = []
        var keys: [String: [Int64]] = [:]
        for id in ids {
            guard let key = id.primaryKey else { continue }
            if keys[id.entityName] == nil { order.append(id.entityName) }
            keys[id.entityName, default: []].append(key)
        }
        // An ID may name a parent of its row's entity (a link holds only a key): in a hierarchy, one statement
        // per entity whose rows it may be, each row read as its own entity.
        let queries = try order.flatMap { name in
            try model.concreteEntities(of: name).map { kind in
                let entity = try model.entity(kind)
                return (entity, fetchStatements.rows(of: entity, primaryKeys: keys[name] ?? []))
            }
        }
        return try read(queries, few: ids.count <= Self.fewRows)
    }

    /// The rows a relationship kept in a join table links these owners to, read through the join table in
    /// one statement (see `FetchStatements.related`); `nil` for a relationship kept in a foreign key.
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` / `.unknownKey` before anything is sent; server errors.
    @_spi(StoreImplementation) public func fetch(related relationship: String, of entityName: String, owners: [Int64])
        throws -> [RowSnapshot]?
    {
        let entity = try model.entity(entityName)
        guard let found = entity.relationships.first(where: { $0.name == relationship }) else {
            throw CVManagedStructError.unknownKey(entity: entityName, key: relationship)
        }
        guard !owners.isEmpty else { return [] }
        guard let sql = try fetchStatements.related(found, of: entity, owners: owners) else { return nil }
        return try read([(try model.entity(found.destination), sql)])
    }

    /// The stored rows of an entity whose attribute `key` has one of `values`, in one statement.
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` / `.unknownKey` / `.typeMismatch` before anything is
    ///   sent; server errors.
    @_spi(StoreImplementation) public func fetch(entityName: String, key: String, values: [AttributeValue]) throws
        -> [RowSnapshot]
    {
        let entity = try model.entity(entityName)
        guard !values.isEmpty else { return [] }
        let kinds =
            mapping.isHierarchical(entityName) ? try model.concreteEntities(of: entityName).map(model.entity) : [entity]
        return try read(
            try kinds.map { ($0, try fetchStatements.rows(of: $0, key: key, values: values)) },
            few: values.count <= Self.fewRows)
    }

    /// The rows that match a request, in the request's order, in batches of at most `batchSize`, through a
    /// server-side cursor: memory holds one batch whatever the number of rows.
    ///
    /// One read-only repeatable-read transaction (so every batch and its relationships come from one
    /// snapshot) that sends `DECLARE ... CURSOR`, then per batch one `FETCH` (each row carries its
    /// relationships' keys). The connection is held until the last batch was handed out or `body`
    /// returned `false`. Nothing is retried once a batch was handed out.
    ///
    /// - Throws: As ``fetch(_:)-(FetchRequest)``; what `body` throws.
    @_spi(StoreImplementation) public func fetch(
        _ request: FetchRequest, batchSize: Int, _ body: ([RowSnapshot]) throws -> Bool
    ) throws {
        let request = try request.validated(in: model)
        let entity = try model.entity(request.entityName)
        if mapping.isHierarchical(entity.name) {
            _ = try body(fetchHierarchy(request))
            return
        }
        let layout = try index.entity(entity.name).layout
        let rows = try fetchStatements.rows(for: request)
        // FETCH counts are 32-bit: a larger batch is every row, as Int32.max rows are.
        let size = min(max(1, batchSize), Int(Int32.max))
        let cursor = SQLIdentifier("_corevalue_stream")
        var delivered = false
        // Handed-out batches can't be handed out again: after the first, an error is thrown as it is.
        try withRetries(mayRetry: { !delivered }) {
            try streamBatches(rows, entity, layout, size, cursor, body, &delivered)
        }
    }

    private func streamBatches(
        _ rows: SQL, _ entity: Entity, _ layout: AttributeLayout, _ size: Int, _ cursor: SQLIdentifier,
        _ body: ([RowSnapshot]) throws -> Bool, _ delivered: inout Bool
    ) throws {
        try withRunner { runner in
            try runner.transaction(isolation: .repeatableRead, readOnly: true) { runner in
                try runner.run("DECLARE \(cursor) NO SCROLL CURSOR FOR " + rows)
                let reader = RowReader(mapping: mapping, entity: entity, layout: layout)
                while true {
                    // FETCH takes no parameters; the count is an integer of ours.
                    var batch: [RowSnapshot] = []
                    batch.reserveCapacity(min(size, 4096))
                    try runner.runRows(SQL(unsafeRaw: "FETCH FORWARD \(size) FROM ") + "\(cursor)") {
                        try reader.append($0, to: &batch)
                    }
                    guard !batch.isEmpty else { break }
                    delivered = true
                    // Fetches `body` makes on this thread (unboxing a batch loads its relationships) run on
                    // this connection, in this transaction: no second connection, the same snapshot.
                    let more = try StreamRunner.with(runner, for: self) { try body(batch) }
                    guard more, batch.count == size else { break }
                }
            }
        }
    }

    /// The rows of one statement known to return few (``fewRows``), read by `reader`: one `SELECT`, its rows in
    /// one result, without the arrays of parts and statements a larger read goes through (a request's read by
    /// identifier).
    private func readFew(_ sql: SQL, _ reader: RowReader) throws -> [RowSnapshot] {
        try withReadRunner(needsTransaction: false) { runner in
            let result = try runner.run(sql)
            var rows: [RowSnapshot] = []
            guard result.rowCount > 0 else { return rows }
            rows.reserveCapacity(result.rowCount)
            try reader.append(result, to: &rows)
            return rows
        }
    }

    /// Reads rows and their relationships; one transaction when more than one statement is needed.
    ///
    /// `few`: the statements return few rows (``fewRows``), so they are sent as `SELECT`s, never as COPY.
    private func read(_ queries: [(Entity, SQL)], few: Bool = false) throws -> [RowSnapshot] {
        if few, queries.count == 1, let (entity, sql) = queries.first {
            return try readFew(sql, try readers.reader(for: entity))
        }
        return try read(queries, inPartsOf: .max, few: few).first ?? []
    }

    /// ``read(_:)``'s rows in consecutive arrays of at most `size` rows (one array, maybe empty, when they
    /// all fit).
    private func read(_ queries: [(Entity, SQL)], inPartsOf size: Int, few: Bool = false) throws -> [[RowSnapshot]] {
        guard !queries.isEmpty else { return [] }
        // A statement reads its rows' links too (as key arrays), so only several statements need one snapshot.
        let needsTransaction = queries.count > 1
        return try withReadRunner(needsTransaction: needsTransaction) { try readAll(queries, size, few, $0) }
    }

    /// Runs a read: inside a stream's batch on this thread, on its connection and snapshot (see
    /// `fetch(_:batchSize:_:)`); otherwise on a pooled connection with retries, in a read-only repeatable-read
    /// transaction when `needsTransaction` or a statement timeout is set (it is set per transaction, so with
    /// one even a single statement gets one).
    func withReadRunner<T>(needsTransaction: Bool, _ body: (StatementRunner) throws -> T) throws -> T {
        if let runner = StreamRunner.current(for: self) { return try body(runner) }
        let transaction = needsTransaction || configuration.statementTimeout != nil
        return try withRetries {
            try withRunner { runner in
                guard transaction else { return try body(runner) }
                do {
                    return try runner.transaction(isolation: .repeatableRead, readOnly: true) { try body($0) }
                } catch let error as LibPQError where error.code == .commitOutcomeUnknown {
                    // A read-only transaction changed nothing, whatever became of its COMMIT: read again.
                    throw LibPQError(.connectionLost, error.message)
                }
            }
        }
    }

    private func readAll(_ queries: [(Entity, SQL)], _ size: Int, _ few: Bool, _ runner: StatementRunner) throws
        -> [[RowSnapshot]]
    {
        var parts: [[RowSnapshot]] = []
        var part: [RowSnapshot] = []
        for (entity, sql) in queries {
            let reader = try readers.reader(for: entity)
            try readRows(sql, reader, runner, into: &part, size: size, few: few) { full in
                parts.append(full)
                full = []
                full.reserveCapacity(size)
            }
        }
        if !part.isEmpty || parts.isEmpty { parts.append(part) }
        return parts
    }

    /// Reads a row statement's rows into `part`, row by row as they arrive (decoded while the server sends the
    /// rest, never all in one result), through binary COPY where its binds allow and it returns more than
    /// `few` rows; `full` gets `part` each time it holds `size` rows, and leaves it empty.
    ///
    /// The row closures capture only `part` and `full`: a captured local function (or captured variables it
    /// changes) cost two dynamic exclusivity checks per row.
    private func readRows(
        _ sql: SQL, _ reader: RowReader, _ runner: StatementRunner, into part: inout [RowSnapshot], size: Int,
        few: Bool, whenFull full: (inout [RowSnapshot]) throws -> Void
    ) throws {
        // COPY takes no parameters, so its text holds the keys and is never the same twice: it pays off for
        // many rows, while a few rows go as a SELECT whose text a statement cache keeps.
        if !few, configuration.readsThroughCopy, let copyText = sql.binaryCopyText {
            try runner.runCopyRows(sql, copyText: copyText) { row in
                try reader.append(&row, to: &part)
                if part.count >= size { try full(&part) }
            }
        } else if few {
            // One result for them all (libpq's usual mode): single-row mode's result per row and the empty one
            // that ends them cost more than they save for a handful of rows.
            let result = try runner.run(sql)
            guard result.rowCount > 0 else { return }
            try reader.append(result, to: &part)
            if part.count >= size { try full(&part) }
        } else {
            try runner.runRows(sql) { result in
                try reader.append(result, to: &part)
                if part.count >= size { try full(&part) }
            }
        }
    }
}

/// The runner of the stream whose batch this thread is handing out, per store: reads made while a batch is
/// processed reuse the stream's connection and transaction.
private final class StreamRunner {
    let runner: StatementRunner
    init(_ runner: StatementRunner) { self.runner = runner }

    private static func key(_ store: PostgresStore) -> String {
        "CoreValuePostgres.stream.\(ObjectIdentifier(store))"
    }

    /// How many batches are being handed out now, in the whole process: while none is, a read skips the
    /// thread-dictionary lookup (a key built and a bridged dictionary searched on every request's read).
    private static let active = Atomic<Int>(0)

    static func current(for store: PostgresStore) -> StatementRunner? {
        guard active.load(ordering: .acquiring) > 0 else { return nil }
        return (Thread.current.threadDictionary[key(store)] as? StreamRunner)?.runner
    }

    static func with<T>(_ runner: StatementRunner, for store: PostgresStore, _ body: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let key = key(store)
        let previous = dictionary[key]
        dictionary[key] = StreamRunner(runner)
        active.add(1, ordering: .releasing)
        defer {
            active.subtract(1, ordering: .releasing)
            dictionary[key] = previous
        }
        return try body()
    }
}

extension PostgresStore {
    /// The rows of a request for an entity in a hierarchy: one statement per entity whose rows it returns
    /// (each row read in its own entity's columns, so each snapshot is of its own entity), in one snapshot,
    /// merged in the request's order (ties by key, a hierarchy's keys being distinct) and windowed. Each
    /// statement reads at most the window's end, in that order.
    func fetchHierarchy(_ request: FetchRequest) throws -> [RowSnapshot] {
        var own = request
        own.includesSubentities = false
        own.fetchOffset = 0
        own.fetchLimit = request.fetchLimit.map { Int.clampedSum(request.fetchOffset, max(0, $0)) }
        let queries = try request.entityNames(in: model).map { name in
            own.entityName = name
            return (try model.entity(name), try fetchStatements.rows(for: own))
        }
        var rows = try read(queries, few: request.fetchLimit.map { $0 <= Self.fewRows } ?? false)
        guard queries.count > 1 || request.fetchOffset > 0 else { return rows }
        rows.sort { lhs, rhs in
            for sort in request.sortDescriptors {
                let order = ValueOrder.sortOrder(
                    lhs.attributes[sort.key] ?? .null, rhs.attributes[sort.key] ?? .null, ascending: sort.ascending)
                if order != 0 { return order < 0 }
            }
            return (lhs.id.primaryKey ?? 0) < (rhs.id.primaryKey ?? 0)
        }
        return Array(rows.dropFirst(request.fetchOffset).prefix(request.fetchLimit ?? Int.max))
    }
}
