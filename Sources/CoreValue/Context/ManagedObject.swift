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
/// and its inverse relationships are not maintained. An object only weakly refers to its context: keep the
/// context alive while you use its objects: when a context is freed, its objects keep their attributes but
/// lose their relationships (which would otherwise keep each other alive), and reading one then throws
/// ``CVManagedStructError/relationshipUnavailable(entity:key:)`` rather than reading as empty.
public final class ManagedObject {
    /// The entity of the object.
    public var entity: Entity { info.entity }
    /// The object's ID: temporary until its context saves, then permanent.
    ///
    /// Unchecked for exclusive access, as the attribute values are: `queryStored` sets it once per row it
    /// reads, and a plain store needs no thread-local lookup on an object confined to one thread.
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID
    /// The context the object belongs to; `nil` for an ephemeral object, and once the context is gone.
    public var managedObjectContext: ManagedObjectContext? { contextHandle?.context }
    /// The context's one weak reference to itself, shared by all its objects: holding it is a plain retain,
    /// where a weak reference per object cost an atomic side-table update when each object was made and freed.
    private let contextHandle: ContextHandle?

    let info: EntityIndex
    /// Attribute values, in the entity's layout (every attribute has one; `.null` for none).
    ///
    /// Not checked for exclusive access at run time: it is read two or three times per unboxed field, and
    /// the checks were a third of unboxing. Objects are confined to one thread, and no access to it here
    /// overlaps another (no closure runs while it is being modified).
    @exclusivity(unchecked) var attributes: AttributeValues
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
    /// This and the flags below are unchecked for exclusive access, as ``attributes`` is: each is a plain
    /// load or store, boxing and saving read and write them for every object, and the checks (a thread-local
    /// lookup each) were a twentieth of writing a record.
    @exclusivity(unchecked) var isIdentifiedByValue = false
    @exclusivity(unchecked) var isInsertedFlag = false
    @exclusivity(unchecked) var isDeletedFlag = false
    @exclusivity(unchecked) var isListedAsChanged = false
    /// Where the next unboxing read probably is: the position after the last attribute read by name.
    /// `fromObject` reads a struct's fields in order, which is usually the entity's, so most reads find their
    /// name there with one comparison instead of hashing it. Unboxing writes it, so even reading an object
    /// is for one thread at a time (objects are not `Sendable`).
    @exclusivity(unchecked) var nextReadHint: Int32 = 0
    /// How many unboxings of this object are in progress (cycle detection).
    var unboxingDepth: Int32 = 0
    /// What the object records only while it has unsaved changes or a pending struct write (see
    /// ``PendingState``); `nil` for an object that was only read.
    @exclusivity(unchecked) var pending: PendingState?
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
    /// through its handle: the context itself is weakly referenced (it has a side table), so retaining it per
    /// object took the runtime's slow path twice per object.
    init(info: EntityIndex, objectID: ManagedObjectID, handle: ContextHandle?) {
        self.info = info
        self.objectID = objectID
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

    // MARK: Attributes

    /// The value of an attribute; `.null` when it has none.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` when the entity has no such attribute.
    public func value(forKey key: String) throws -> AttributeValue {
        attributes[at: try info.position(key)] ?? .null
    }

    /// The value of an attribute as a Swift type, or `nil` when it is null.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``, or
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` when the value does not convert
    ///   to `T` without loss.
    public func value<T: AttributeValueConvertible>(forKey key: String, as type: T.Type = T.self) throws -> T? {
        let value = try self.value(forKey: key)
        if value.isNull { return nil }
        guard let result = T(attributeValue: value) else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "\(T.self)", found: value.typeDescription)
        }
        return result
    }

    /// Sets an attribute, converting losslessly to its type; `.null` clears it.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``,
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)``, or
    ///   ``CVManagedStructError/invalidObject(message:)`` for a deleted object.
    public func setValue(_ value: AttributeValue, forKey key: String) throws {
        try assign(try converted(value, forKey: key), forKey: key)
    }

    /// Sets an attribute from a Swift value; `nil` clears it.
    ///
    /// - Throws: See `setValue(_:forKey:)`.
    public func setValue<T: AttributeValueConvertible>(_ value: T?, forKey key: String) throws {
        try setValue(value?.attributeValue ?? .null, forKey: key)
    }

    /// A value converted to the type of the attribute `key`.
    func converted(_ value: AttributeValue, forKey key: String) throws -> AttributeValue {
        let attribute = try info.attribute(key)
        guard let converted = value.converted(to: attribute.type) else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: attribute.type.rawValue, found: value.typeDescription)
        }
        return converted
    }

    /// Stores an already converted value, recording the change.
    func assign(_ value: AttributeValue, forKey key: String) throws {
        try assign(value, at: try info.position(key))
    }

    /// Stores an already converted value at a position of the entity's layout, recording the change.
    func assign(_ value: AttributeValue, at position: Int) throws {
        guard !isDeletedFlag else {
            throw CVManagedStructError.invalidObject(message: "\(objectID) was deleted")
        }
        let old = attributes[at: position] ?? .null
        guard old != value else { return }
        let key = info.layout.names[position]
        managedObjectContext?.undoLog?.recordAttribute(self, key)
        if let original = originalAttributes[key] {
            if original == value { originalAttributes[key] = nil }
        } else {
            originalAttributes[key] = old
        }
        attributes[at: position] = value
        if upsertKey != nil, upsertAttributes?.contains(key) == false { upsertAttributes?.insert(key) }
        managedObjectContext?.attributeDidChange(self, at: position, key: key, from: old, to: value)
    }

    // MARK: Relationships

    /// The destination of a to-one relationship, loading it if needed.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` for a key that is no to-one relationship,
    ///   or the store's error when loading fails.
    public func object(forKey key: String) throws -> ManagedObject? {
        let relationship = try info.relationship(key)
        guard !relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "to-one relationship", found: relationship.kind.rawValue)
        }
        return try related(key).first
    }

    /// The destinations of a to-many relationship (in order for an ordered one), loading them if needed.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` for a key that is no to-many
    ///   relationship, or the store's error when loading fails.
    public func objects(forKey key: String) throws -> [ManagedObject] {
        let relationship = try info.relationship(key)
        guard relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "to-many relationship", found: relationship.kind.rawValue)
        }
        return try related(key)
    }

    /// The destinations of an unordered (or ordered) to-many relationship as a set.
    ///
    /// - Throws: See ``objects(forKey:)``.
    public func objectSet(forKey key: String) throws -> Set<ManagedObject> {
        Set(try objects(forKey: key))
    }

    /// Sets the destinations of an unordered to-many relationship.
    ///
    /// - Throws: See ``setObject(_:forKey:)``.
    public func setObjectSet(_ objects: Set<ManagedObject>, forKey key: String) throws {
        try setObjects(Array(objects), forKey: key)
    }

    /// Sets or clears a to-one relationship; the inverse is updated on both sides.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``,
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for an object of another entity,
    ///   ``CVManagedStructError/invalidObject(message:)`` for an object of another context or a deleted one.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws {
        let relationship = try info.relationship(key)
        guard !relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "to-many value", found: "one object")
        }
        try setRelated(object.map { [$0] } ?? [], forKey: key)
    }

    /// Replaces the destinations of a to-many relationship (their order is kept for an ordered one); the
    /// inverse is updated on both sides. Objects no longer listed are unlinked, not deleted; but an empty list
    /// for a relationship whose delete rule is `cascade` deletes every member.
    ///
    /// - Throws: See ``setObject(_:forKey:)``.
    public func setObjects(_ objects: [ManagedObject], forKey key: String) throws {
        let relationship = try info.relationship(key)
        guard relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "one object", found: "\(objects.count) objects")
        }
        try setRelated(objects, forKey: key)
    }

    func related(_ key: String) throws -> [ManagedObject] {
        if let context = managedObjectContext { return try context.resolve(self, key) }
        // Without a context nothing can load a stored key: an object whose context was released (or any link
        // still unloaded) would read as empty, and a struct unboxed from it would unlink every member when
        // saved. That is an error, never an empty value.
        let current = links[key] ?? []
        if isDetached || current.contains(where: { $0.object == nil }) {
            throw CVManagedStructError.relationshipUnavailable(entity: info.name, key: key)
        }
        return current.compactMap(\.object)
    }

    func setRelated(_ objects: [ManagedObject], forKey key: String) throws {
        let relationship = try info.relationship(key)
        guard !isDeletedFlag else { throw CVManagedStructError.invalidObject(message: "\(objectID) was deleted") }
        for object in objects {
            guard
                object.entity.name == relationship.destination
                    || info.isDestination(relationship, kindOf: object.entity.name)
            else {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: key, expected: relationship.destination, found: object.entity.name)
            }
            guard object.managedObjectContext === managedObjectContext, !object.isDeletedFlag else {
                throw CVManagedStructError.invalidObject(
                    message: "\(object.objectID) is deleted or belongs to another context than \(objectID)")
            }
        }
        if let context = managedObjectContext {
            try context.relate(self, relationship, to: objects)
        } else {
            links[key] = objects.map(Link.object)
        }
    }

    /// Replaces the links of a relationship, recording the change.
    func replaceLinks(_ key: String, _ newLinks: [Link]) {
        recordOriginalLinks(key)
        links[key] = newLinks
    }

    /// Removes the link to `object` from a relationship, recording the change.
    func removeLink(to object: ManagedObject, _ key: String) {
        guard let position = links[key]?.firstIndex(where: { $0.refers(to: object) }) else { return }
        recordOriginalLinks(key)
        links[key]?.remove(at: position)
    }

    /// Removes the links to several objects from a relationship in one pass, recording the change.
    func removeLinks(to objects: [ManagedObject], _ key: String) {
        guard let current = links[key], !objects.isEmpty else { return }
        if objects.count == 1 {
            removeLink(to: objects[0], key)
            return
        }
        let identities = Set(objects.map(ObjectIdentifier.init))
        let keys = Set(objects.compactMap(\.objectID.primaryKey))
        let kept = current.filter { link in
            switch link {
            case .object(let linked): return !identities.contains(ObjectIdentifier(linked))
            case .key(let primaryKey): return !keys.contains(primaryKey)
            }
        }
        guard kept.count != current.count else { return }
        recordOriginalLinks(key)
        links[key] = kept
    }

    /// Forgets the recorded original links of `key` when the current links are the same again.
    func dropUnchangedLinks(_ key: String) {
        guard let original = originalLinks[key] else { return }
        let current = links[key] ?? []
        guard original.isSame(as: current) else { return }
        originalLinks[key] = nil
    }

    /// Appends a link to `object`, recording the change (in place: appending n links costs O(n)).
    func appendLink(to object: ManagedObject, _ key: String) {
        recordOriginalLinks(key)
        links[key, default: []].append(.object(object))
    }

    private func recordOriginalLinks(_ key: String) {
        managedObjectContext?.undoLog?.recordLinks(self, key)
        if originalLinks[key] == nil { originalLinks[key] = links[key] ?? [] }
        managedObjectContext?.markChanged(self)
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

/// One link of a relationship: a loaded object, or the stored key of one not loaded yet.
enum Link {
    case object(ManagedObject)
    case key(Int64)

    var object: ManagedObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// Whether two links point to the same object.
    func same(as other: Link) -> Bool {
        switch (self, other) {
        case (.key(let lhs), .key(let rhs)): return lhs == rhs
        case (_, .object(let object)): return refers(to: object)
        case (.object(let object), _): return other.refers(to: object)
        }
    }

    /// Whether the link points to `object` (by identity, or by its stored key).
    func refers(to object: ManagedObject) -> Bool {
        switch self {
        case .object(let linked): return linked === object
        case .key(let key): return object.objectID.primaryKey == key
        }
    }
}

extension [Link] {
    /// Whether two link lists name the same objects in the same order.
    func isSame(as other: [Link]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.same(as: $1) }
    }
}

/// Objects belong to their context's task or thread.
@available(*, unavailable, message: "objects belong to their context's task; pass a ManagedObjectID instead")
extension ManagedObject: Sendable {}

extension ManagedObject {
    /// Takes a stored row's version and attribute values (not its links).
    func loadAttributes(from snapshot: RowSnapshot) {
        version = snapshot.version
        if snapshot.attributes.isComplete, snapshot.attributes.layout.hasSameNames(as: info.layout) {
            // A store hands every attribute of the entity in its layout (the Store contract): share its
            // storage rather than copy each value.
            attributes = snapshot.attributes
        } else {
            for (position, attribute) in info.entity.attributes.enumerated() {
                attributes[at: position] = snapshot.attributes[attribute.name] ?? .null
            }
        }
    }

    /// The position of the attribute `name` in the object's layout, or `nil` when the entity has no such
    /// attribute; tries ``nextReadHint`` before the layout's dictionary.
    func readPosition(of name: String) -> Int? {
        let names = attributes.layout.names
        let hint = Int(nextReadHint)
        let position: Int
        if hint < names.count, names[hint] == name {
            position = hint
        } else if let found = attributes.layout.position(of: name) {
            position = found
        } else {
            return nil
        }
        nextReadHint = Int32(truncatingIfNeeded: position + 1)
        return position
    }
}

/// The change tracking of one object between saves: original values and links, and what the unique struct
/// that wrote it had. Most objects are fetched and only read; they never make one, so an object carries one
/// `nil` reference (made and freed with no work) instead of six empty collections.
///
/// The fields written once per boxed unique struct are unchecked for exclusive access, as the object's own
/// flags are: a context and its objects are used by one thread at a time, and each check cost a thread-local
/// lookup.
final class PendingState {
    var originalAttributes: [String: AttributeValue] = [:]
    var originalLinks: [String: [Link]] = [:]
    @exclusivity(unchecked) var upsertKey: String?
    @exclusivity(unchecked) var upsertAttributes: Set<String>?
    @exclusivity(unchecked) var identifiedAttributes: Set<String>?
    var identifiedRelationships: Set<String> = []
}

/// A weak reference to a context, made once per context and shared by its objects.
final class ContextHandle {
    weak var context: ManagedObjectContext?
}
