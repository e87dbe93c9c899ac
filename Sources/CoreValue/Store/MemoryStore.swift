import Foundation

/// A ``Store`` that keeps every row in memory: for tests, previews and small tools.
///
/// It answers each call as `PostgresStore` does: the same validation errors before any work, the same
/// version checks (``CVManagedStructError/conflict(entity:message:)``), unique upserts, sort order
/// (PostgreSQL's defaults: nulls last ascending, ties by primary key; strings by code point, as PostgreSQL
/// sorts them under the `C` collation) and all-or-nothing saves. One difference: a duplicate unique value
/// or a link to a missing row throws ``CVManagedStructError/constraintViolation(entity:key:message:)`` here,
/// where `PostgresStore` throws the server's error (SQLSTATE 23505, 23503). It is thread-safe: every call
/// holds one lock.
///
/// ```swift
/// let store = MemoryStore(model: model)
/// let context = ManagedObjectContext(store: store)
/// ```
///
/// Deleting a row unlinks it everywhere (foreign keys read as `nil`, join rows disappear); the delete rules
/// `cascade` and `deny` are applied by the context, which loads the related objects first.
public final class MemoryStore: StoreRefinements, @unchecked Sendable {
    // @unchecked: `state` and `history` are read and written under `lock` (every call holds it); the rest is
    // constant.
    /// The model the store was created with.
    public let model: ManagedObjectModel
    let index: ModelIndex
    /// Which side of each relationship the store keeps (its own choice).
    let links: MemoryLinks
    private let lock = NSLock()
    var state = MemoryState()
    /// How case-insensitive matches lower-case text.
    let folding: CaseFolding
    /// The recorded history, when the store records it (under the lock, as ``state``).
    var history: MemoryHistory?

    /// Creates an empty store for a model.
    ///
    /// Case-insensitive matches (`contains(_:caseInsensitive: true)`, `localizedStandardContains`) lower-case
    /// with Unicode's mapping as of `caseMappingVersion`, as PostgreSQL's `ILIKE` does with an ICU of that
    /// Unicode version: letters assigned later are left as they are. The default,
    /// ``defaultCaseMappingVersion`` (15.0), is that of the ICU of the PostgreSQL the tests run against;
    /// `PostgresStore.caseMappingVersion` tells a server's. A version above Swift's own tables gives Swift's.
    ///
    /// With `recordsHistory`, every committed save is recorded (see ``HistoryStore``), by `author` unless the
    /// saving context names its own.
    public init(
        model: ManagedObjectModel, caseMappingVersion: Unicode.Version = MemoryStore.defaultCaseMappingVersion,
        recordsHistory: Bool = false, author: String? = nil
    ) {
        self.model = model
        self.index = ModelIndex(model)
        self.links = MemoryLinks(model: model)
        self.folding = CaseFolding(unicodeVersion: caseMappingVersion)
        self.history = recordsHistory ? MemoryHistory(author: author) : nil
    }

    /// Unicode 15.0: the case mapping of ICU 72, which PostgreSQL uses on Debian 12 (and ICU 73 and 74 map
    /// the same letters). Swift's own tables are newer (Unicode 17 in Swift 6.3).
    public static let defaultCaseMappingVersion: Unicode.Version = CaseFolding.defaultUnicodeVersion

    /// The Unicode version whose lower-case mapping case-insensitive matches use.
    @_spi(StoreImplementation) public var caseMappingVersion: Unicode.Version { folding.unicodeVersion }

    /// The number of stored rows of an entity (0 for an unknown entity).
    public func count(of entityName: String) -> Int {
        locked { state.tables[entityName]?.count ?? 0 }
    }

    /// The rows matching a request, sorted, windowed, with their relationship keys.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, ``CVManagedStructError/unknownKey(entity:key:)``
    ///   or ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for a request that does not fit.
    @_spi(StoreImplementation) public func fetch(_ request: FetchRequest) throws -> [RowSnapshot] {
        let request = try request.validated(in: model)
        let entity = try index.entity(request.entityName)
        if let predicate = request.predicate { try refuseUnstorableOperands(predicate, of: entity) }
        return try locked {
            var reader = SnapshotReader(index: index, links: links, state: state)
            let state = self.state
            let index = self.index
            // The evaluator reads links through the snapshot reader, which caches reverse link maps.
            let rowReader = PredicateEvaluator.Reader<(key: Int64, row: MemoryRow, entity: EntityIndex)>(
                attribute: { $0.row.attributes[$1] ?? .null },
                isNull: { subject, name in
                    // A row holds every attribute; a name it holds no value for is a relationship.
                    if let value = subject.row.attributes[name] { return value.isNull }
                    return reader.toOne(subject.entity, subject.key, subject.row, name) == nil
                },
                related: { subject, name in
                    guard let relationship = subject.entity.relationships[name] else { return [] }
                    let destination = try index.entity(relationship.destination)
                    let keys = reader.related(subject.entity, subject.key, subject.row, relationship)
                    return try keys.compactMap { key in
                        // A link to a parent may hold a subentity's row: read as that subentity.
                        guard let found = state.row(kindOf: destination, key) else { return nil }
                        let kind = found.entity == destination.name ? destination : try index.entity(found.entity)
                        return (key, found.row, kind)
                    }
                }, folding: folding)
            // The rows of the entity and, in a hierarchy, of its subentities: a hierarchy shares one key
            // sequence, so the keys are distinct and order ties among them as among one entity's rows.
            let kinds = entity.isInHierarchy ? try request.entityNames(in: model).map(index.entity) : [entity]
            var rows: [Int64: (row: MemoryRow, entity: EntityIndex)] = [:]
            var keys: [Int64] = []
            for kind in kinds {
                for (key, row) in state.tables[kind.name] ?? [:] {
                    if let predicate = request.predicate {
                        guard try PredicateEvaluator.matches(predicate, (key, row, kind), rowReader) else { continue }
                    }
                    keys.append(key)
                    rows[key] = (row, kind)
                }
            }
            keys.sort { lhs, rhs in
                for sort in request.sortDescriptors {
                    let order = ValueOrder.sortOrder(
                        rows[lhs]?.row.attributes[sort.key] ?? .null, rows[rhs]?.row.attributes[sort.key] ?? .null,
                        ascending: sort.ascending)
                    if order != 0 { return order < 0 }
                }
                return lhs < rhs
            }
            let window = keys.dropFirst(request.fetchOffset).prefix(request.fetchLimit ?? Int.max)
            return window.compactMap { key in rows[key].map { reader.snapshot($0.entity, key, $0.row) } }
        }
    }

    /// The rows for these IDs; IDs naming no row (and temporary IDs) are left out.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)`` for an ID of an entity the model lacks.
    @_spi(StoreImplementation) public func fetch(ids: [ManagedObjectID]) throws -> [RowSnapshot] {
        for id in ids { _ = try index.entity(id.entityName) }
        return try locked {
            var reader = SnapshotReader(index: index, links: links, state: state)
            var seen = Set<ManagedObjectID>()
            var result: [RowSnapshot] = []
            for id in ids where seen.insert(id).inserted {
                // An ID may name a parent of the row's entity (a link to a parent holds only a key): the
                // snapshot names the row's own entity.
                guard let key = id.primaryKey, let found = state.row(kindOf: try index.entity(id.entityName), key)
                else { continue }
                result.append(reader.snapshot(try index.entity(found.entity), key, found.row))
            }
            return result
        }
    }

    /// The rows of an entity whose attribute `key` has one of `values`.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, ``CVManagedStructError/unknownKey(entity:key:)``,
    ///   or ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for a value of another type.
    @_spi(StoreImplementation) public func fetch(entityName: String, key: String, values: [AttributeValue]) throws
        -> [RowSnapshot]
    {
        let entity = try index.entity(entityName)
        let attribute = try entity.attribute(key)
        let wanted = Set(
            try values.map { value in
                guard let converted = value.converted(to: attribute.type) else {
                    throw CVManagedStructError.typeMismatch(
                        entity: entityName, key: key, expected: attribute.type.rawValue,
                        found: value.typeDescription)
                }
                return converted
            })
        return locked {
            var reader = SnapshotReader(index: index, links: links, state: state)
            var keys: [Int64] = []
            if attribute.isUnique {
                keys = wanted.compactMap { state.uniqueOwner("\(entity.root).\(key)", $0) }
            } else {
                for kind in entity.kinds {
                    for (rowKey, row) in state.tables[kind] ?? [:] where wanted.contains(row.attributes[key] ?? .null) {
                        keys.append(rowKey)
                    }
                }
            }
            return keys.sorted().compactMap { rowKey in
                guard let found = state.row(kindOf: entity, rowKey) else { return nil }
                let kind = found.entity == entity.name ? entity : index.entities[found.entity] ?? entity
                return reader.snapshot(kind, rowKey, found.row)
            }
        }
    }

    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

extension MemoryStore: ModelIndexSharing {
    package var sharedIndex: ModelIndex { index }
}
