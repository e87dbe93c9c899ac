import Foundation

/// One committed save, as a store with history recorded it.
public struct HistoryTransaction: Sendable, Hashable {
    /// Where a reader stands once it has read this transaction: pass it to
    /// ``HistoryStore/history(after:limit:)`` for what follows.
    public var token: HistoryToken
    /// The transaction's number in the store's history, taken as its last statement before `COMMIT`: a
    /// transaction that had to wait for another's row locks has the higher number.
    public var transactionNumber: Int64
    /// When it was recorded, just before it committed.
    public var timestamp: Date
    /// Who saved: the context's ``ManagedObjectContext/transactionAuthor``, else the store's configured author.
    public var author: String?
    /// The context's ``ManagedObjectContext/transactionName`` for the save.
    public var name: String?
    /// What it changed, one entry per object: inserts, then updates, then deletes.
    public var changes: [HistoryChange]

    /// Creates a transaction.
    public init(
        token: HistoryToken, transactionNumber: Int64, timestamp: Date, author: String?, name: String?,
        changes: [HistoryChange]
    ) {
        self.token = token
        self.transactionNumber = transactionNumber
        self.timestamp = timestamp
        self.author = author
        self.name = name
        self.changes = changes
    }
}

/// What one transaction did to one object.
public struct HistoryChange: Sendable, Hashable {
    /// The kind of change.
    public enum Kind: String, Sendable, Hashable, Codable {
        case insert, update, delete
    }

    /// Whether the object was inserted, updated or deleted. A unique struct's upsert is an update, whether it
    /// found its row or made it (as ``ManagedObjectContext`` change notifications count it).
    public var kind: Kind
    /// The object.
    public var objectID: ManagedObjectID
    /// For an update: the names of the attributes and relationships it wrote, sorted (every attribute for a
    /// unique struct's upsert). Empty for inserts and deletes.
    public var updatedProperties: [String]
    /// For a delete: the values of the entity's unique attributes and of those marked
    /// ``Attribute/preservesValueAfterDeletion``, as they were when the row was deleted. Empty otherwise.
    public var tombstone: [String: AttributeValue]
    /// The object's version once the transaction committed (its row's optimistic-locking version, as
    /// a persistent struct's next save checks); `nil` for a delete, and for an owner whose only change was a
    /// member list the store keeps on the other side.
    public var version: Int64?

    /// The entity of the changed object.
    public var entityName: String { objectID.entityName }

    /// Creates a change.
    public init(
        kind: Kind, objectID: ManagedObjectID, updatedProperties: [String] = [],
        tombstone: [String: AttributeValue] = [:], version: Int64? = nil
    ) {
        self.kind = kind
        self.objectID = objectID
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
        self.version = version
    }
}
