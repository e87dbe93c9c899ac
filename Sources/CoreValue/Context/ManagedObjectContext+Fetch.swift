extension ManagedObjectContext {
    /// The objects matching a request, including the context's unsaved changes.
    ///
    /// When the entity has no pending changes, the store answers the request as is. Otherwise the store's
    /// first `offset + limit + k` matches (k: the entity's changed and deleted objects, each of which can
    /// drop one stored row out of the window) are merged with the pending inserted and changed objects, the
    /// predicate is evaluated in memory on the current values, deleted objects are dropped, and the result is
    /// sorted (ties by primary key, unsaved objects last in insertion order) and windowed. Only the pending
    /// objects of the request's entity are looked at.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, ``CVManagedStructError/unknownKey(entity:key:)``
    ///   or ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` before any store call, or the
    ///   store's error.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        let (request, info) = try validated(request)
        return try fetchValidated(request, info)
    }

    /// `request` validated against the model, and its entity: looked up once, for both.
    private func validated(_ request: FetchRequest) throws -> (FetchRequest, EntityIndex) {
        let info = try index.entity(request.entityName)
        return (try request.validated(in: model, entity: info.entity), info)
    }

    /// The structs the objects matching a request unbox to (`query`), in the request's order.
    ///
    /// For an entity without relationships and without pending changes, each part of the rows is unboxed as
    /// soon as it is registered, while the store reads the next part. An object with relationships may load
    /// them through the store while it is unboxed, so those objects are all fetched first, then unboxed.
    ///
    /// - Throws: As ``fetch(_:)-yg54``; what `unbox` throws.
    func fetchUnboxing<T>(_ request: FetchRequest, _ unbox: (ManagedObject) throws -> T) throws -> [T] {
        let (request, info) = try validated(request)
        guard info.entity.relationships.isEmpty, !hasPendingChanges(of: info) else {
            return try fetchValidated(request, info).map(unbox)
        }
        return try fetchStored(request, info, unbox)
    }

    /// The objects of a request's stored rows, each passed through `transform` (``fetch(_:)-yg54``: the object
    /// itself; `query`: the struct unboxed from it), for an entity without pending changes.
    ///
    /// Each part the store hands over is registered, and its objects transformed, while the store reads the
    /// next: after the last row arrives, only the last part is left to do. A part is freed once registered. A
    /// read the store starts again voids what was collected (the objects registered stay registered: each
    /// holds its row as read, and the rows come again).
    func fetchStored<T>(_ request: FetchRequest, _ info: EntityIndex, _ transform: (ManagedObject) throws -> T)
        throws -> [T]
    {
        // With none of the entity's objects registered before, every row makes a new one.
        var fresh = registry[info]?.isEmpty ?? true
        // One array, grown by doubling (a large array's old storage is returned when it moves): reserving
        // each part's exact total copied the array once per part, and joining per-part arrays at the end
        // held every part beside the whole.
        var results: [T] = []
        // Room for every row at once when the request says how many will come (a fetch by identifiers): the
        // tables then grow once, not once per doubling as the parts come.
        if let expected = Self.expectedRowCount(request) {
            reserveCapacity(expected, of: info, fetched: true)
            results.reserveCapacity(expected)
        }
        try refined.fetch(request) { part in
            switch part {
            case .restart:
                results.removeAll()
                fresh = false
            case .rows(let rows):
                // An async call cancelled while its rows arrive stops here rather than unboxing them all
                // (the store stops reading as the error passes through it); a synchronous call has no token.
                let token = CancellationToken.current
                try token?.checkCancellation()
                let objects = try register(rows, of: info, fresh: fresh)
                results.reserveGrowing(results.count + objects.count)
                for (offset, object) in objects.enumerated() {
                    if let token, offset & 1023 == 1023 { try token.checkCancellation() }
                    results.append(try transform(object))
                }
            }
        }
        return results
    }

    /// How many rows to make room for before any arrives, where the request says how many will come: the
    /// values of a top-level `IN` (one row each when the key is unique: a fetch by identifiers), at most the
    /// fetch limit; a fetch limit alone gives a first guess of at most ``guessedRowCount`` (a limit is a
    /// bound, often a page size taken from a request, not a promise: `Int.max` must not reserve anything).
    /// `nil` otherwise. Only a capacity: more rows may come (a key that is not unique), or fewer.
    static func expectedRowCount(_ request: FetchRequest) -> Int? {
        let limit = request.fetchLimit.map { max(0, $0) }
        if case .isIn(_, let values)? = request.predicate { return min(values.count, limit ?? .max) }
        return limit.map { min($0, guessedRowCount) }
    }

    /// The most rows a fetch limit alone makes room for before they arrive: one part of a store's rows.
    static let guessedRowCount = 1_024

    /// ``fetch(_:)-yg54`` of a request already validated against the model, for the entity `info`.
    func fetchValidated(_ request: FetchRequest, _ info: EntityIndex) throws -> [ManagedObject] {
        guard hasPendingChanges(of: info) else { return try fetchStored(request, info) { $0 } }
        // In a hierarchy, the pending objects of every entity the request returns.
        let kinds = fetchedKinds(request, info)
        let inserted = kinds.flatMap { pendingInserts.of($0) }
        let changed = kinds.flatMap { pendingChanges.of($0) }.filter(\.hasChanges)
        let deletedCount = kinds.reduce(0) { $0 + pendingDeletes.of($1).count }
        var widened = request
        widened.fetchLimit = request.fetchLimit.map {
            Int.clampedSum(request.fetchOffset, $0, changed.count, deletedCount)
        }
        widened.fetchOffset = 0
        // Matches with the position they were found at: stored rows, changed objects, then inserted objects in
        // insertion order (which orders unsaved objects among themselves).
        var matching: [(object: ManagedObject, position: Int)] = []
        var seen = Set<ObjectIdentifier>()
        // Read once per fetch: the store may ask its server the first time.
        let reader = Self.objectReader(CaseFolding(unicodeVersion: refined.caseMappingVersion))
        func consider(_ object: ManagedObject, storedMatch: Bool = false) throws {
            guard !object.isDeletedFlag else { return }
            let matched = try storedMatch || Self.matches(request.predicate, object, reader)
            if matched { matching.append((object, matching.count)) }
        }
        // A stored row's object without a pending write was just loaded from the row the store matched, so it
        // matches: evaluating it again would cost a pass per row (and, for a related predicate, a load of
        // every row's relationships). Objects with a pending write keep their own values and are evaluated.
        for snapshot in try store.fetch(widened) {
            let object = try register(snapshot, of: info)
            if seen.insert(ObjectIdentifier(object)).inserted {
                try consider(object, storedMatch: !object.hasPendingWrite)
            }
        }
        for object in changed where seen.insert(ObjectIdentifier(object)).inserted { try consider(object) }
        // Inserted objects have temporary IDs: no stored row can be one of them.
        for object in inserted { try consider(object) }
        matching.sort { lhs, rhs in
            for sort in request.sortDescriptors {
                let result = ValueOrder.sortOrder(
                    lhs.object.attribute(named: sort.key) ?? .null, rhs.object.attribute(named: sort.key) ?? .null,
                    ascending: sort.ascending)
                if result != 0 { return result < 0 }
            }
            switch (lhs.object.objectID.primaryKey, rhs.object.objectID.primaryKey) {
            case (let left?, let right?): return left < right
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return lhs.position < rhs.position
            }
        }
        return matching.dropFirst(request.fetchOffset).prefix(request.fetchLimit ?? Int.max).map(\.object)
    }

    /// How many objects match a request, including the context's unsaved changes: one counting statement when
    /// the entity has none, otherwise the matching objects of ``fetch(_:)-yg54`` counted.
    ///
    /// - Throws: As ``fetch(_:)-yg54``.
    public func count(for request: FetchRequest) throws -> Int {
        let (request, info) = try validated(request)
        guard hasPendingChanges(of: info) else { return try store.count(request) }
        return try fetchValidated(request, info).count
    }

    /// Whether the context has unsaved inserts, changes or deletes of the entity (in a hierarchy, of any
    /// entity whose objects are the entity's).
    func hasPendingChanges(of info: EntityIndex) -> Bool {
        if info.isInHierarchy {
            return info.kinds.contains { kind in
                index.entities[kind].map { hasOwnPendingChanges(of: $0) } ?? false
            }
        }
        return hasOwnPendingChanges(of: info)
    }

    private func hasOwnPendingChanges(of info: EntityIndex) -> Bool {
        pendingInserts.of(info).contains { !$0.isDeletedFlag }
            || pendingChanges.of(info).contains(where: \.hasChanges) || !pendingDeletes.of(info).isEmpty
    }

    /// Whether an object matches a validated predicate on its current, unsaved values, read by `reader`
    /// (``objectReader(_:)``); a related predicate reads the related objects through this context (loading them
    /// when needed).
    private static func matches(
        _ predicate: CVPredicate?, _ object: ManagedObject, _ reader: PredicateEvaluator.Reader<ManagedObject>
    ) throws -> Bool {
        guard let predicate else { return true }
        return try PredicateEvaluator.matches(predicate, object, reader)
    }

    /// Reads objects' current values, lower-casing as the store's server does (``StoreRefinements/caseMappingVersion``):
    /// a pending object matches a case-insensitive predicate exactly when its row would.
    private static func objectReader(_ folding: CaseFolding) -> PredicateEvaluator.Reader<ManagedObject> {
        PredicateEvaluator.Reader(
            attribute: { $0.attribute(named: $1) ?? .null },
            isNull: { object, key in
                // An object holds every attribute; a name it holds no value for is a relationship.
                if let value = object.attribute(named: key) { return value.isNull }
                return !(object.links[key] ?? []).contains { link in
                    if case .object(let linked) = link { return !linked.isDeletedFlag }
                    return true
                }
            },
            related: { object, key in
                let relationship = object.info.relationships[key]
                let related: [ManagedObject]
                if relationship?.isToMany == true {
                    related = try object.objects(forKey: key)
                } else {
                    related = try object.object(forKey: key).map { [$0] } ?? []
                }
                return related.filter { !$0.isDeletedFlag }
            }, folding: folding)
    }
}
