/// Persistent storage behind a ``ManagedObjectContext``.
///
/// Applications open a store (``MemoryStore``, `PostgresStore`) and hand it to contexts; they never call it
/// directly. Its requirements and value types (`RowSnapshot`, `ChangeSet`, `SaveResult`, `AttributeValues`,
/// `CancellationToken`, ...) are for store implementers, behind
/// `@_spi(StoreImplementation) import CoreValue`, so that they can change without breaking applications.
///
/// A store answers each call with a fixed number of statements, whatever the number of rows, and hands
/// out plain `Sendable` snapshots, never anything a context owns. Stores are shared across threads.
///
/// A store implements these few requirements (a fetch, a fetch by IDs, a stream, a save and a count; the
/// stream and the count have defaults); what it can do better than the defaults CoreValue builds on them
/// (parts, related rows, streamed saves, blocking work, its case mapping) it adds by conforming to
/// ``StoreRefinements`` as well.
/// ``MemoryStore`` keeps everything in memory; `PostgresStore` keeps it in PostgreSQL.
public protocol Store: AnyObject, Sendable {
    /// The model the store was opened with.
    var model: ManagedObjectModel { get }

    /// The stored rows that match a request, in the request's order, with their relationships' keys.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)`` or ``CVManagedStructError/unknownKey(entity:key:)``
    ///   for a request that does not fit the model, before any work is done; store errors otherwise.
    @_spi(StoreImplementation) func fetch(_ request: FetchRequest) throws -> [RowSnapshot]

    /// The stored rows for these IDs (permanent IDs of any entities), in no particular order. IDs that name
    /// no row are left out of the result.
    @_spi(StoreImplementation) func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot]

    /// Applies a change set in one transaction: everything or nothing.
    ///
    /// - Returns: The permanent ID of every inserted object and the new version of every written one.
    /// - Throws: ``CVManagedStructError/conflict(entity:message:)`` when an update or delete names a version
    ///   that is no longer current, and store errors otherwise; in every case nothing was changed.
    @_spi(StoreImplementation) func apply(_ changes: ChangeSet) throws -> SaveResult

    /// The stored rows that match a request, in the request's order, handed to `body` in batches of at most
    /// `batchSize` rows, with their relationships' keys, as ``fetch(_:)-(FetchRequest)`` would return them; `body`
    /// returns `false` to stop early.
    ///
    /// A store keeps only a batch or so in memory at a time whatever the number of rows (`PostgresStore`
    /// reads through a cursor in one read-only transaction). The default fetches everything and hands it out
    /// in slices, for stores that hold their rows in memory anyway.
    ///
    /// - Throws: As ``fetch(_:)-(FetchRequest)``, and what `body` throws (which ends the stream).
    @_spi(StoreImplementation) func fetch(
        _ request: FetchRequest, batchSize: Int, _ body: ([RowSnapshot]) throws -> Bool) throws

    /// How many stored rows match a request (its window applied), in one statement. The default fetches
    /// the rows and counts them.
    ///
    /// - Throws: As ``fetch(_:)-(FetchRequest)``.
    @_spi(StoreImplementation) func count(_ request: FetchRequest) throws -> Int
}

/// What a ``Store`` can do better than the defaults CoreValue builds on its requirements: hand a fetch over in
/// parts, read related rows through where it keeps them, write a streamed save as it comes, run the work of
/// async calls off the cooperative pool, and say which case mapping it uses. Each has a default (below); a
/// store conforms to this protocol to replace some. Contexts reach a store's refinements, or the defaults,
/// through `Store.refinements`.
public protocol StoreRefinements: Store {
    /// ``Store/fetch(_:)-(FetchRequest)``'s rows, in its order, handed to `body` in consecutive parts of at most a
    /// few thousand rows, each as soon as it is read: a context registers a part (and a query unboxes it)
    /// while the store reads the next, and frees it before the next, so a large fetch never holds one array
    /// of every row beside the objects made from it. The default hands over ``Store/fetch(_:)-(FetchRequest)``'s
    /// rows as one part.
    ///
    /// When the store reads the rows again (a retry after the connection was lost), it first calls `body`
    /// with ``FetchedPart/restart``: the parts handed over before are void, and every row comes again. `body`
    /// may call the store (a store serves it on another connection); what it throws ends the fetch and is
    /// thrown as it is.
    ///
    /// - Throws: As ``Store/fetch(_:)-(FetchRequest)``; what `body` throws.
    @_spi(StoreImplementation) func fetch(_ request: FetchRequest, inParts body: (FetchedPart) throws -> Void) throws

    /// The stored rows that a to-many relationship of the rows `owners` (primary keys of `entityName`) links
    /// to now, in no particular order (a row linked from two owners may come twice), for a store that can
    /// read them through where it keeps the relationship faster than by their IDs; `nil` (the default) when
    /// it can't, and the context then calls ``Store/fetch(ids:)`` with the keys it holds.
    ///
    /// The context keeps only rows whose keys the owners' links it holds name, and fetches by ID any such
    /// key this did not return: the result is what ``Store/fetch(ids:)`` would have given.
    @_spi(StoreImplementation) func fetch(related relationship: String, of entityName: String, owners: [Int64])
        throws -> [RowSnapshot]?

    /// The stored rows of an entity whose attribute `key` has one of `values`, in no particular order.
    ///
    /// This is how unique structs find their rows: one call per batch. The default fetches them with an `IN`
    /// predicate on `key`.
    @_spi(StoreImplementation) func fetch(entityName: String, key: String, values: [AttributeValue]) throws
        -> [RowSnapshot]

    /// Applies a change set that `produce` hands over in parts, in one transaction, as ``Store/apply(_:)`` applies
    /// the parts together: everything or nothing, and a result for all of them.
    ///
    /// `produce` calls `send` with each part as soon as it is ready; a store may start writing a part while
    /// `produce` prepares the next (`PostgresStore` pipelines them), so the caller's work and the store's
    /// overlap. Parts hold inserts only (the rows of a bulk `saveAll`). Nothing is committed before `produce`
    /// returns, and nothing at all when it throws. `produce` is called once per attempt: a store that retries
    /// the transaction (`PostgresStore`, after a serialization failure or a failover) calls it again rather
    /// than keeping every part, and `produce` then hands over the same parts again (a context replays the
    /// changes of the objects it made, without boxing a second time). The default collects the parts and
    /// calls ``Store/apply(_:)`` once. A store may report inserts by their position in the stream
    /// (``SaveResult/streamedInserts``) rather than by ID.
    ///
    /// `upserts`, when given, says before the first part what every part holds: upserts of one entity by its
    /// identifier, handed over in ascending identifier order from `upserts.lowest` on. A store may use it to
    /// choose how it writes them (`PostgresStore` inserts rows plainly when no stored row can share an
    /// identifier with them); the result must be the same.
    ///
    /// - Throws: What `produce` throws (`send` throws the store's validation errors for a part); otherwise
    ///   as ``Store/apply(_:)``.
    @_spi(StoreImplementation) func apply(
        upserts: StreamedUpserts?, streaming produce: (_ send: (ChangeSet) throws -> Void) throws -> Void
    ) throws -> SaveResult

    /// Runs the synchronous work of an async call (`try await context.save()`, say) where blocking is
    /// harmless, and returns at once; `work` reports its own result.
    ///
    /// A store whose calls block (on a network, a disk) runs `work` on a thread of its own, never on the
    /// thread that calls this (a thread of Swift's cooperative pool). While `work` runs,
    /// ``CancellationToken/current`` is the call's token: check it before each statement and cancel the
    /// running one from its handler. The default runs `work` at once on the calling thread, for stores that
    /// never block (``MemoryStore``).
    @_spi(StoreImplementation) func runBlocking(_ work: @escaping @Sendable () -> Void)

    /// Whether the calling thread is one of the store's own, where an async call's blocking work may run at
    /// once instead of through ``runBlocking(_:)`` (a task that prefers the store's task executor runs there):
    /// no handoff to another thread and back. The default: `false`.
    @_spi(StoreImplementation) var runsBlockingWorkHere: Bool { get }

    /// The Unicode version whose lower-case mapping the store's case-insensitive matches use: a context
    /// evaluates its pending objects with the same one, so they match exactly when their rows would. The
    /// default is ``MemoryStore/defaultCaseMappingVersion``.
    @_spi(StoreImplementation) var caseMappingVersion: Unicode.Version { get }

    /// The results of an aggregate over the stored rows (never a context's unsaved changes), in group order
    /// (each group value ascending, nulls last), with SQL's meaning (``AggregateFunction``); the request is
    /// valid for the model (its predicate validated, `resultType(in:)` checked). A store
    /// with a query language answers in one statement (`PostgresStore`: `GROUP BY`); the default reads the
    /// matching rows in batches and folds them in memory.
    ///
    /// - Throws: ``CVManagedStructError/Code/aggregateOverflow`` for an integer sum beyond `Int64`; as
    ///   ``Store/fetch(_:)-(FetchRequest)`` otherwise.
    @_spi(StoreImplementation) func aggregate(_ request: AggregateRequest) throws -> [AggregateRow]

    /// Sets the request's values on every stored row its predicate matches, in one transaction, moving each
    /// row to its next version; the request is valid for the model (``BatchUpdateRequest`` validated). A store
    /// with a query language writes them in one statement (`PostgresStore`: `UPDATE ... WHERE`); the default
    /// fetches the matching rows and applies one change set updating each, again if a row changed meanwhile.
    ///
    /// - Throws: As ``Store/apply(_:)``.
    @_spi(StoreImplementation) func batchUpdate(_ request: BatchUpdateRequest) throws -> BatchResult

    /// Deletes every stored row the request's predicate matches, in one transaction, with the entity's delete
    /// rules (cascade, deny, nullify); the request is valid for the model. A store with a query language
    /// deletes them in one statement where it can; the default deletes them through a context of its own
    /// (fetched, deleted with the context's rules, saved).
    ///
    /// - Throws: ``CVManagedStructError/constraintViolation(entity:key:message:)`` naming a `deny`
    ///   relationship that still has related rows; as ``Store/apply(_:)`` otherwise. Nothing is deleted then.
    @_spi(StoreImplementation) func batchDelete(_ request: BatchDeleteRequest) throws -> BatchResult
}

extension Store {
    /// Fetches every row, then hands them to `body` in slices of `batchSize`.
    @_spi(StoreImplementation) public func fetch(
        _ request: FetchRequest, batchSize: Int, _ body: ([RowSnapshot]) throws -> Bool
    ) throws {
        let rows = try fetch(request)
        let size = max(1, batchSize)
        var start = 0
        while start < rows.count {
            let end = rows.count - start > size ? start + size : rows.count
            guard try body(Array(rows[start..<end])) else { return }
            start = end
        }
    }

    /// Fetches the matching rows and counts them.
    @_spi(StoreImplementation) public func count(_ request: FetchRequest) throws -> Int {
        try fetch(request).count
    }

    /// The parts of ``StoreRefinements/fetch(_:inParts:)``, collected: the rows of ``Store/fetch(_:)-(FetchRequest)`` in
    /// consecutive arrays (one array, maybe empty, when they all fit in one part).
    ///
    /// - Throws: As ``Store/fetch(_:)-(FetchRequest)``.
    @_spi(StoreImplementation) public func fetchInParts(_ request: FetchRequest) throws -> [[RowSnapshot]] {
        var parts: [[RowSnapshot]] = []
        try refinements.fetch(request) { part in
            switch part {
            case .restart: parts.removeAll()
            case .rows(let rows): parts.append(rows)
            }
        }
        return parts.isEmpty ? [[]] : parts
    }

    /// What contexts call for the refinements: the store itself when it conforms to ``StoreRefinements``,
    /// else ``StoreRefinements``'s defaults over this store's requirements.
    @_spi(StoreImplementation) public var refinements: any StoreRefinements {
        (self as? any StoreRefinements) ?? DefaultRefinements(base: self)
    }
}

extension StoreRefinements {
    /// `false`: blocking work goes through ``runBlocking(_:)``.
    @_spi(StoreImplementation) public var runsBlockingWorkHere: Bool { false }

    /// ``MemoryStore/defaultCaseMappingVersion``.
    @_spi(StoreImplementation) public var caseMappingVersion: Unicode.Version { CaseFolding.defaultUnicodeVersion }

    /// No faster way: the context fetches the related rows by ID.
    @_spi(StoreImplementation) public func fetch(related relationship: String, of entityName: String, owners: [Int64])
        throws -> [RowSnapshot]?
    {
        nil
    }

    /// The rows of ``Store/fetch(_:)-(FetchRequest)``, as one part.
    @_spi(StoreImplementation) public func fetch(
        _ request: FetchRequest, inParts body: (FetchedPart) throws -> Void
    ) throws {
        try body(.rows(try fetch(request)))
    }

    /// The rows whose `key` is one of `values`, through ``Store/fetch(_:)-(FetchRequest)`` with an `IN`
    /// predicate.
    @_spi(StoreImplementation) public func fetch(entityName: String, key: String, values: [AttributeValue]) throws
        -> [RowSnapshot]
    {
        try fetch(FetchRequest(entityName: entityName, predicate: .isIn(key: key, values)))
    }

    /// Collects the parts and applies them together (`upserts` is not needed for that).
    @_spi(StoreImplementation) public func apply(
        upserts: StreamedUpserts?, streaming produce: (_ send: (ChangeSet) throws -> Void) throws -> Void
    ) throws -> SaveResult {
        var whole = ChangeSet()
        try produce { part in
            whole.inserts += part.inserts
            whole.updates += part.updates
            whole.deletes += part.deletes
            whole.relationships += part.relationships
        }
        return try apply(whole)
    }

    /// Reads the matching rows in batches of 10,000 and folds them in memory.
    @_spi(StoreImplementation) public func aggregate(_ request: AggregateRequest) throws -> [AggregateRow] {
        try aggregateFetchedRows(request)
    }

    /// ``aggregate(_:)`` folded in memory over the fetched rows: the default, and a store's way for what its
    /// own statements do not answer (`PostgresStore`: an entity in a hierarchy, whose rows are fetched per
    /// entity).
    package func aggregateFetchedRows(_ request: AggregateRequest) throws -> [AggregateRow] {
        var aggregator = try Aggregator(request, entity: try model.entity(request.entityName))
        let rows = FetchRequest(entityName: request.entityName, predicate: request.predicate)
        try fetch(rows, batchSize: 10_000) { batch in
            for row in batch {
                aggregator.add(row.attributes)
            }
            return true
        }
        return try aggregator.rows()
    }

    /// Fetches the matching rows and applies one change set that updates each at the version read; a row
    /// another writer changed meanwhile is a conflict, and the whole is done again (three attempts at most).
    @_spi(StoreImplementation) public func batchUpdate(_ request: BatchUpdateRequest) throws -> BatchResult {
        try batchUpdateFetchedRows(request)
    }

    /// ``batchUpdate(_:)`` as one change set over the fetched rows: the default, and a store's way for what
    /// its own statements do not answer (`PostgresStore`: an entity in a hierarchy).
    package func batchUpdateFetchedRows(_ request: BatchUpdateRequest) throws -> BatchResult {
        let values = AttributeValues(request.values)
        var attempt = 1
        while true {
            let rows = try fetch(FetchRequest(entityName: request.entityName, predicate: request.predicate))
            let updates = rows.map { ObjectChange(id: $0.id, version: $0.version, attributes: values) }
            do {
                var changes = ChangeSet(updates: updates)
                changes.transactionAuthor = request.transactionAuthor
                changes.transactionName = request.transactionName
                if !updates.isEmpty { _ = try apply(changes) }
            } catch let error as CVManagedStructError where error.code == .conflict && attempt < 3 {
                attempt += 1
                continue
            }
            let ids = rows.map(\.id).inKeyOrder()
            return BatchResult(count: rows.count, objectIDs: request.returnsObjectIDs ? ids : nil)
        }
    }

    /// Deletes the matching rows through a context of its own, with the context's delete rules.
    @_spi(StoreImplementation) public func batchDelete(_ request: BatchDeleteRequest) throws -> BatchResult {
        try request.runThroughContext(on: self)
    }

    /// Runs `work` at once on the calling thread: for stores whose calls never block.
    @_spi(StoreImplementation) public func runBlocking(_ work: @escaping @Sendable () -> Void) {
        work()
    }
}

/// ``StoreRefinements``'s defaults over a store that has none of its own.
private final class DefaultRefinements: StoreRefinements {
    let base: any Store

    init(base: any Store) { self.base = base }

    var model: ManagedObjectModel { base.model }

    func fetch(_ request: FetchRequest) throws -> [RowSnapshot] { try base.fetch(request) }

    func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] { try base.fetch(ids: ids) }

    func apply(_ changes: ChangeSet) throws -> SaveResult { try base.apply(changes) }

    func fetch(_ request: FetchRequest, batchSize: Int, _ body: ([RowSnapshot]) throws -> Bool) throws {
        try base.fetch(request, batchSize: batchSize, body)
    }

    func count(_ request: FetchRequest) throws -> Int { try base.count(request) }
}

/// A stored row as a store reads it: ID, version, attributes and relationship keys.
@_spi(StoreImplementation) public struct RowSnapshot: Sendable, Hashable {
    /// The permanent ID.
    public var id: ManagedObjectID
    /// The optimistic-locking version the row was read at.
    public var version: Int64
    /// Every attribute of the entity; `.null` for nulls. A store builds them in the entity's layout
    /// (``AttributeLayout/init(_:)``), so a context adopts them without copying.
    public var attributes: AttributeValues
    /// Every to-one relationship of the entity: the destination's primary key, or `nil`.
    public var toOne: [String: Int64?]
    /// Every to-many relationship of the entity: destination primary keys, in position order when ordered.
    public var toMany: [String: [Int64]]

    /// Creates a snapshot.
    public init(
        id: ManagedObjectID,
        version: Int64,
        attributes: AttributeValues,
        toOne: [String: Int64?] = [:],
        toMany: [String: [Int64]] = [:]
    ) {
        self.id = id
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }
}

/// What ``StoreRefinements/fetch(_:inParts:)`` hands over: the next rows, or word that the read starts again.
@_spi(StoreImplementation) public enum FetchedPart: Sendable {
    /// The next rows, in the request's order, after those handed over before.
    case rows([RowSnapshot])
    /// The store reads the rows again (a retry): the rows handed over so far are void, and every row comes
    /// again after this.
    case restart
}
