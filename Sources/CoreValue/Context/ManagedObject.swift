import Foundation

/// One record of an entity in a context: its attributes and its links to other records.
///
/// Objects come from ``ManagedObjectContext/insert(entityName:)``, fetches, or boxing a struct. Read and
/// write attributes with ``value(forKey:)`` / `setValue(_:forKey:)` (or the typed variants) and
/// relationships with ``object(forKey:)``, ``objects(forKey:)`` and their setters. Related objects are loaded
/// lazily and in batches: the first access to a relationship loads that relationship's objects for every
/// registered object of the entity in one store call.
///
/// An object without a context (boxing with a `nil` context) is *ephemeral*: it can be read but not saved,
/// and its inverse relationships are not maintained. An object does not keep its context alive: keep the
/// context alive while you use its objects: when a context is freed, its objects keep their attributes but
/// lose their relationships (which would otherwise keep each other alive), and reading one then throws
/// ``CVManagedStructError/relationshipUnavailable(entity:key:)`` rather than reading as empty.
public final class ManagedObject {
    /// The entity of the object.
    public var entity: Entity { info.entity }
    /// The object's ID: temporary until its context saves, then permanent.
    public internal(set) var objectID: ManagedObjectID {
        get { storedID }
        set {
            var id = newValue
            swap(&storedID, &id)
        }
    }
    /// ``objectID``'s storage. A stored public property can be read from other modules, so the compiler checks
    /// every access to it at run time; this one is read and written only here, and the setter swaps rather than
    /// assigns, so the old ID is released after the access: the optimizer proves that no access overlaps
    /// another and checks none at run time (`queryStored` sets it once per row it reads).
    private var storedID: ManagedObjectID
    /// The context the object belongs to; `nil` for an ephemeral object, and once the context is gone.
    public var managedObjectContext: ManagedObjectContext? { contextHandle?.context }
    /// The context's one reference to itself, shared by all its objects (``ContextHandle``): holding it is a
    /// plain retain, where a weak reference per object cost an atomic side-table update when each object was
    /// made and freed.
    private let contextHandle: ContextHandle?

    let info: EntityIndex
    /// Attribute values, in the entity's layout (`info.layout`: every attribute has one, `.null` for none).
    ///
    /// Read and written only through the accessors at the end of the class, whose accesses hold no call and
    /// release nothing (a write swaps the values out, changes them and swaps them back): the optimizer then
    /// proves that no access to it overlaps another and checks none at run time, where unboxing would pay a
    /// check per field (BENCHMARKS.md, "Exclusivity checks back on public types").
    private var attributes: AttributeValues
    /// Relationship links by name: objects once loaded, stored keys until then.
    var links: [String: [Link]] = [:]
    /// The version the object was read at; `nil` until first saved.
    ///
    /// The flags and counters after it are declared here, in the bytes its optional leaves over, rather than
    /// each in a word of its own: 136 bytes an object instead of 152, which a fetch of 100,000 objects feels.
    var version: Int64?
    /// Set when the object's context was released: its links are gone, and reading a relationship throws
    /// ``CVManagedStructError/relationshipUnavailable(entity:key:)`` instead of reading as empty.
    var isDetached = false
    /// Whether a unique struct wrote this object since the last save: its identity is its identifier, so the
    /// update is not checked against the version read (last writer wins, as with the upsert that inserts it).
    /// Set once boxing succeeded; cleared by save and rollback.
    ///
    /// This and the flags below are plain loads and stores: the optimizer proves their accesses exclusive
    /// and checks none at run time, as it does for ``nextReadHint`` and ``pending``.
    var isIdentifiedByValue = false
    var isInsertedFlag = false
    var isDeletedFlag = false
    var isListedAsChanged = false
    /// Whether ``version`` is the one this context's own save gave the object (not one it read): a struct that
    /// carries an older version may be this context's own value from before that save.
    var isVersionFromOwnSave = false
    /// Where the next unboxing read probably is: the position after the last attribute read by name.
    /// `fromObject` reads a struct's fields in order, which is usually the entity's, so most reads find their
    /// name there with one comparison instead of hashing it. Unboxing writes it, so even reading an object
    /// is for one thread at a time (objects are not `Sendable`).
    var nextReadHint: Int32 = 0
    /// How many unboxings of this object are in progress (cycle detection).
    var unboxingDepth: Int32 = 0
    /// What the object records only while it has unsaved changes or a pending struct write (see
    /// ``PendingState``); `nil` for an object that was only read.
    var pending: PendingState?
    /// ``pending``, made on first use.
    private var writablePending: PendingState {
        if let pending { return pending }
        let made = PendingState()
        pending = made
        return made
    }
    /// Values before the first unsaved change, per changed attribute.
    var originalAttributes: [String: AttributeValue] {
        get { pending?.originalAttributes ?? [:] }
        _modify {
            let state = writablePending
            yield &state.originalAttributes
        }
    }
    /// Links before the first unsaved change, per changed relationship.
    var originalLinks: [String: [Link]] {
        get { pending?.originalLinks ?? [:] }
        _modify {
            let state = writablePending
            yield &state.originalLinks
        }
    }
    /// For an object inserted by a unique struct: the attribute to upsert on.
    var upsertKey: String? {
        get { pending?.upsertKey }
        set { if newValue != nil || pending != nil { writablePending.upsertKey = newValue } }
    }
    /// For an upsert: the attributes to send (what the struct set, and what was set later); `nil` sends all.
    var upsertAttributes: Set<String>? {
        get { pending?.upsertAttributes }
        _modify {
            let state = writablePending
            yield &state.upsertAttributes
        }
    }
    /// For a stored object a unique struct wrote since the last save (``isIdentifiedByValue``): the attributes
    /// that struct has, all of which the update sends, changed or not, so that the row ends up equal to one
    /// whole struct (last writer wins for the whole struct, never a mix of two writers' columns). `nil` with
    /// ``isIdentifiedByValue`` set: every attribute of the entity.
    var identifiedAttributes: Set<String>? {
        get { pending?.identifiedAttributes }
        set { if newValue != nil || pending != nil { writablePending.identifiedAttributes = newValue } }
    }
    /// The relationships that struct has: their owned links (foreign keys, member lists) are sent with the
    /// whole struct too, changed or not.
    var identifiedRelationships: Set<String> {
        get { pending?.identifiedRelationships ?? [] }
        _modify {
            let state = writablePending
            yield &state.identifiedRelationships
        }
    }
    /// Forgets the last unit of work's change tracking: original values and links, and the per-save flags.
    /// A save and a rollback end with this for every object they touched.
    func clearPendingState() {
        pending = nil
        isListedAsChanged = false
        isIdentifiedByValue = false
    }

    /// An object of the context whose handle this is (`nil`: an ephemeral object). A context makes its objects
    /// through its handle, one reference shared by all of them, rather than referring to itself from each.
    init(info: EntityIndex, objectID: ManagedObjectID, handle: ContextHandle?) {
        self.info = info
        self.storedID = objectID
        self.contextHandle = handle
        // Shares the entity's prebuilt defaults until the first write copies them.
        self.attributes = info.defaultAttributes
    }

    /// Whether the object was inserted and not yet saved.
    public var isInserted: Bool { isInsertedFlag }
    /// Whether the object was deleted (the deletion is pending until the context saves).
    public var isDeleted: Bool { isDeletedFlag }
    /// Whether the object has unsaved changes.
    public var hasChanges: Bool {
        guard !isInsertedFlag, !isDeletedFlag else { return true }
        guard let pending else { return false }
        return !pending.originalAttributes.isEmpty || !pending.originalLinks.isEmpty
    }
    /// Whether the next save writes the object: it has changes, or a unique struct wrote it (whose whole tuple
    /// is the last write even when no value changed).
    var hasPendingWrite: Bool { hasChanges || isIdentifiedByValue }
    /// The attributes and relationships changed since the last save.
    public var changedKeys: Set<String> { Set(originalAttributes.keys).union(originalLinks.keys) }

    // MARK: Attribute storage (see ``attributes``)

    /// The value at a position of the entity's layout.
    func attribute(at position: Int) -> AttributeValue? {
        attributes[at: position]
    }

    /// The value of the attribute `key`; `nil` when the entity has no such attribute.
    func attribute(named key: String) -> AttributeValue? {
        // The object's values are in `info.layout`'s order: its position is theirs, found outside the access.
        guard let position = info.layout.position(of: key) else { return nil }
        return attributes[at: position]
    }

    /// Every value, sharing the object's storage until either side writes.
    var attributeValues: AttributeValues { attributes }

    /// Takes `values` (in the entity's layout) as they are, sharing their storage.
    func replaceAttributes(with values: AttributeValues) {
        var values = values
        swap(&attributes, &values)
    }

    /// Sets the value at a position without recording a change (``assign(_:at:)`` records one).
    func setAttribute(_ value: AttributeValue, at position: Int) {
        changeAttributes { $0[at: position] = value }
    }

    /// Changes the values in place: they are taken out of the object, changed and put back, so that what the
    /// change calls and releases (a copy on write, the old values) happens outside any access to the object.
    /// The object holds no values meanwhile: `change` must not read them through the object.
    func changeAttributes<R>(_ change: (inout AttributeValues) throws -> R) rethrows -> R {
        var values = AttributeValues()
        swap(&attributes, &values)
        defer { swap(&attributes, &values) }
        return try change(&values)
    }
}

extension ManagedObject: Hashable, CustomStringConvertible {
    /// Objects are equal when they are the same instance.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    /// Hashes the instance.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// The object's ID and attributes.
    public var description: String { "<\(objectID)>" }
}

/// Objects belong to their context's task or thread.
@available(*, unavailable, message: "objects belong to their context's task; pass a ManagedObjectID instead")
extension ManagedObject: Sendable {}
