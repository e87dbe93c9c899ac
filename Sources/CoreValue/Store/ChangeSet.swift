// What a save hands its store (`Store.apply`), and what the store hands back.

/// Everything one save writes. IDs of inserted objects are temporary; stores map them to permanent ones.
@_spi(StoreImplementation) public struct ChangeSet: Sendable, Hashable {
    /// New objects (temporary IDs), in insertion order.
    public var inserts: [ObjectChange]
    /// Changed stored objects, each with the version it was read at.
    public var updates: [ObjectChange]
    /// Deleted stored objects, each with the version it was read at.
    public var deletes: [ObjectDeletion]
    /// For to-many relationships, either side of an inverse pair: owners whose member list changed, with the
    /// complete new list (in order for ordered relationships). A context changes both sides of a link
    /// together and sends both; each store writes the sides it keeps (a foreign key, a join table, an
    /// adjacency list: its own choice) and derives the others, so a side it does not keep is not written.
    public var relationships: [RelationshipChange]
    /// Who saved (a context's `transactionAuthor`), for a store that records history; `nil`: the store's own.
    public var transactionAuthor: String?
    /// The save's name (a context's `transactionName`), for a store that records history.
    public var transactionName: String?

    /// Creates a change set.
    public init(
        inserts: [ObjectChange] = [],
        updates: [ObjectChange] = [],
        deletes: [ObjectDeletion] = [],
        relationships: [RelationshipChange] = []
    ) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.relationships = relationships
    }

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        inserts.isEmpty && updates.isEmpty && deletes.isEmpty && relationships.isEmpty
    }
}

/// The attributes and owned to-one links of one inserted or updated object.
@_spi(StoreImplementation) public struct ObjectChange: Sendable, Hashable {
    /// The object's ID: temporary for an insert, permanent for an update.
    public var id: ManagedObjectID
    /// For an update, the version the object was read at; `nil` for an insert.
    public var version: Int64?
    /// For an insert: every attribute. For an update: the changed attributes only. A context sends them in
    /// the entity's layout (``AttributeLayout/init(_:)``); a store accepts any layout.
    public var attributes: AttributeValues
    /// To-one relationships that are set or changed, either side of an inverse pair (see
    /// ``ChangeSet/relationships``): the destination's ID (which may be temporary, inserted in the same change
    /// set) or `nil` to clear.
    public var toOne: [String: ManagedObjectID?]
    /// For an insert of a unique entity: the attribute whose value identifies the row. The store inserts,
    /// or, if a row with that value already exists (another process inserted it), updates that row and
    /// returns its ID (`INSERT ... ON CONFLICT ... DO UPDATE`).
    public var upsertKey: String?
    /// For an update with a `version`: write the row only if its version moved on from `version` (another
    /// writer changed it since it was read); a row still at `version` already holds these values and is left
    /// as it is. A version that moved on is no conflict; a row that no longer exists is. A unique struct saved
    /// unchanged is sent this way, with every attribute.
    public var unlessCurrent: Bool

    /// Creates an object change.
    public init(
        id: ManagedObjectID,
        version: Int64? = nil,
        attributes: AttributeValues,
        toOne: [String: ManagedObjectID?] = [:],
        upsertKey: String? = nil,
        unlessCurrent: Bool = false
    ) {
        self.id = id
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.upsertKey = upsertKey
        self.unlessCurrent = unlessCurrent
    }
}

/// A stored object to delete, with the version it was read at (`nil`: delete whatever version is stored).
@_spi(StoreImplementation) public struct ObjectDeletion: Sendable, Hashable {
    /// The permanent ID.
    public var id: ManagedObjectID
    /// The version the object was read at.
    public var version: Int64?

    /// Creates a deletion.
    public init(id: ManagedObjectID, version: Int64?) {
        self.id = id
        self.version = version
    }
}

/// The complete new member list of one owner of an owning to-many relationship.
@_spi(StoreImplementation) public struct RelationshipChange: Sendable, Hashable {
    /// The owner's ID (temporary if inserted in the same change set).
    public var owner: ManagedObjectID
    /// The relationship's name on the owner's entity.
    public var relationship: String
    /// The members, in order for an ordered relationship; IDs may be temporary.
    public var members: [ManagedObjectID]

    /// Creates a relationship change.
    public init(owner: ManagedObjectID, relationship: String, members: [ManagedObjectID]) {
        self.owner = owner
        self.relationship = relationship
        self.members = members
    }
}

/// What a streamed save tells its store before the first part (see ``StoreRefinements/apply(upserts:streaming:)``):
/// every part upserts rows of one entity by its identifier, in ascending identifier order (the server's
/// order: integers, UUIDs, text in byte order), the first of them `lowest`.
@_spi(StoreImplementation) public struct StreamedUpserts: Sendable, Hashable {
    /// The entity whose rows every part upserts.
    public var entityName: String
    /// The unique attribute the rows are upserted by.
    public var key: String
    /// The least identifier in the stream: no part holds a smaller one.
    public var lowest: AttributeValue
    /// The most rows the parts hold together (fewer when some share an identifier).
    public var count: Int

    /// Describes a stream of upserts.
    public init(entityName: String, key: String, lowest: AttributeValue, count: Int) {
        self.entityName = entityName
        self.key = key
        self.lowest = lowest
        self.count = count
    }
}

/// What a store returns from ``Store/apply(_:)``.
@_spi(StoreImplementation) public struct SaveResult: Sendable, Hashable {
    /// For every insert: temporary ID → permanent ID (for an upsert that hit an existing row, that row's ID).
    public var permanentIDs: [ManagedObjectID: ManagedObjectID]
    /// For every inserted or updated object (keyed by permanent ID): its new version.
    public var versions: [ManagedObjectID: Int64]
    /// For ``StoreRefinements/apply(upserts:streaming:)`` only: the stored key and new version of inserts by their position in
    /// the stream (the order the parts handed them over), for a store that reports them this way instead of
    /// in ``permanentIDs`` and ``versions``: two tables keyed by ID cost about 330 bytes per inserted row, and
    /// a random memory access each to fill and to read. An insert whose position is past the end or `nil`
    /// is in the tables. Empty by default.
    public var streamedInserts: [StoredRow?]

    /// The stored key and version of one inserted row (see ``streamedInserts``); the entity is its insert's.
    public struct StoredRow: Sendable, Hashable {
        /// The row's surrogate key: its permanent ID is `.permanent(entity, primaryKey)`.
        public var primaryKey: Int64
        /// The row's version after the save.
        public var version: Int64

        /// Creates a stored row.
        public init(primaryKey: Int64, version: Int64) {
            self.primaryKey = primaryKey
            self.version = version
        }
    }

    /// Creates a save result.
    public init(
        permanentIDs: [ManagedObjectID: ManagedObjectID] = [:], versions: [ManagedObjectID: Int64] = [:],
        streamedInserts: [StoredRow?] = []
    ) {
        self.permanentIDs = permanentIDs
        self.versions = versions
        self.streamedInserts = streamedInserts
    }

    /// The permanent ID and version of the insert `id` handed over at `position` of a stream (any position
    /// for a save that was not streamed): from ``streamedInserts``, else from the tables.
    public func saved(insert id: ManagedObjectID, at position: Int) -> (id: ManagedObjectID, version: Int64?)? {
        if position < streamedInserts.count, let row = streamedInserts[position] {
            return (.permanent(id.entityName, row.primaryKey), row.version)
        }
        guard let permanent = permanentIDs[id] else { return nil }
        return (permanent, versions[permanent])
    }

    /// This result with ``streamedInserts`` moved into ``permanentIDs`` and ``versions``, given the stream's
    /// inserts in the order they were handed over.
    public func tabulated(streamed inserts: [ObjectChange]) -> SaveResult {
        guard !streamedInserts.isEmpty else { return self }
        var result = SaveResult(permanentIDs: permanentIDs, versions: versions)
        for (position, insert) in inserts.enumerated() {
            guard position < streamedInserts.count, let row = streamedInserts[position] else { continue }
            let permanent = ManagedObjectID.permanent(insert.id.entityName, row.primaryKey)
            result.permanentIDs[insert.id] = permanent
            result.versions[permanent] = row.version
        }
        return result
    }
}
