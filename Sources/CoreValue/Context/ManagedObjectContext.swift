import Foundation

/// A unit of work over a ``Store``: the objects read and changed by one task, saved together.
///
/// A context keeps one object per stored row (an identity map), tracks inserts, changes and deletes,
/// keeps inverse relationships consistent on both sides in memory, applies delete rules when an object is
/// deleted, and writes everything in one `Store.apply(_:)` call on ``save()-6ko1p``. Fetches see pending
/// changes. Like a Core Data context, a context is used by one thread or task at a time: it is not
/// `Sendable`; give each task its own context over a shared store.
///
/// ```swift
/// let context = ManagedObjectContext(store: MemoryStore(model: model))
/// let employee = try context.insert(entityName: "Employee")
/// try employee.setValue("Alice", forKey: "name")
/// try context.save()
/// ```
public final class ManagedObjectContext {
    /// The store the context reads from and saves to.
    public let store: any Store
    /// The store's refinements, or the defaults over its requirements (`Store.refinements`), looked up once.
    let refined: any StoreRefinements
    /// The model of the store.
    public var model: ManagedObjectModel { index.model }

    let index: ModelIndex
    /// Registered objects by entity, then ID (see ``Registry``).
    ///
    /// This, the three pending lists and ``missingIDs`` are the context's bookkeeping that every request reads
    /// and writes, and are marked `@exclusivity(unchecked)`: their accesses call into the standard library
    /// (a dictionary's or an array's growth, the release of what they replace), so the compiler could not prove
    /// them exclusive and checked each at run time (a dozen checks per request). They are internal, a context
    /// has one user at a time, and nothing an access releases runs code that reaches the context (objects and
    /// snapshots have no `deinit` of their own), so no two accesses can overlap; the compiler still rejects
    /// any overlap it can see.
    @exclusivity(unchecked) var registry = Registry()
    /// Objects inserted since the last save, in insertion order (deleted ones are skipped when saving).
    @exclusivity(unchecked) var pendingInserts = PendingList()
    /// Stored objects changed since the last save.
    @exclusivity(unchecked) var pendingChanges = PendingList()
    /// Stored objects deleted since the last save.
    @exclusivity(unchecked) var pendingDeletes = PendingList()
    var insertedList: [ManagedObject] { pendingInserts.all }
    var changedList: [ManagedObject] { pendingChanges.all }
    var deletedList: [ManagedObject] { pendingDeletes.all }
    /// The registered, not deleted object holding each unique attribute value.
    ///
    /// Objects a fetch registers join it on its next use, in the order they were registered (``unindexed``):
    /// most fetched objects are only read, and are never looked up by a unique value.
    var uniqueIndex: [UniqueValue: ManagedObject] {
        _read {
            indexRegistered()
            yield uniqueTables.indexed
        }
        _modify {
            indexRegistered()
            yield &uniqueTables.indexed
        }
    }
    /// Objects of entities with unique attributes that a fetch registered and ``uniqueIndex`` does not hold yet.
    var unindexed: [ManagedObject] {
        _read { yield uniqueTables.unindexed }
        _modify { yield &uniqueTables.unindexed }
    }
    /// The unique index's tables, in an object of their own: boxing and saving read and change them for every
    /// object, and an access that yields them to its caller cannot be proven exclusive, so on the context each
    /// would be checked at run time. Their object is internal, and a context is used by one thread at a time.
    final class UniqueTables {
        @exclusivity(unchecked) var indexed: [UniqueValue: ManagedObject] = [:]
        @exclusivity(unchecked) var unindexed: [ManagedObject] = []
    }
    private let uniqueTables = UniqueTables()
    /// During a streamed bulk save (``saveStreamed(_:)``), the entity whose objects it makes, and the part's
    /// objects by identifier. Those objects are registered and indexed when the save commits: until then
    /// nothing can look them up but the boxing of their own part (equal identifiers share one part), so they
    /// skip the context's two large tables (two random memory accesses per object and 25 MB at 100,000).
    final class BulkInsert {
        let entity: Int32
        @exclusivity(unchecked) var uniques: [UniqueValue: ManagedObject] = [:]
        init(entity: Int32) { self.entity = entity }
    }
    var bulkInsert: BulkInsert?

    /// The bulk save in progress when it makes `info`'s objects.
    func bulkInsert(of info: EntityIndex) -> BulkInsert? {
        guard let bulkInsert, bulkInsert.entity == info.number else { return nil }
        return bulkInsert
    }
    /// The permanent ID each object inserted here got when saved, by its temporary ID: a struct unboxed
    /// before the save still finds its object.
    var savedIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// IDs a store fetch did not return: not fetched again by relationship loading.
    @exclusivity(unchecked) var missingIDs: Set<ManagedObjectID> = []
    /// What the struct-level operation in progress did, so that a failure can undo it.
    var undoLog: UndoLog?
    /// What a save does when another writer changed a row since this context read it (``MergePolicy``);
    /// ``MergePolicy/error`` (throw ``CVManagedStructError/Code/conflict``) by default.
    public var mergePolicy: MergePolicy = .error
    /// Who this context's saves are by, as a store that records history keeps it
    /// (``HistoryTransaction/author``): a process or service name, say. `nil`: the store's configured author.
    public var transactionAuthor: String?
    /// The name history records for this context's saves (``HistoryTransaction/name``): what a request does,
    /// say. Kept until changed.
    public var transactionName: String?
    /// The objects the last save merged with their stored rows (``mergePolicy``): a struct saved with one of
    /// them takes the merged values.
    var mergedObjects: Set<ObjectIdentifier> = []
    /// The struct type a unique struct's `save` is boxing (see ``BoxingUniqueStruct/defaultSave(_:)``): the
    /// first boxing of that type takes it (and clears it), and may upsert blindly, as the save follows at once.
    var typeBoxedForSave: ObjectIdentifier?
    /// While a persistent struct's save boxes it (``BoxingPersistentStruct/mutatingToObject(_:)``, `saveAll`):
    /// the record each boxed root was made from, by its object, so that adopting the saved IDs compares the
    /// struct read back with what was boxed without boxing the struct again. `nil` otherwise.
    var boxedRoots: [ObjectIdentifier: BoxRecord]?
    /// Struct layouts resolved against the model, per struct type (backed by the index's shared plans).
    package let layouts: LayoutCache

    /// The largest number of IDs or values sent in one store call.
    public static let batchSize = 10_000

    /// The deepest graph of nested structs boxing accepts, and the deepest chain of related objects unboxing
    /// reads through (`<|`, `<|?`, `<||` inside `fromObject`); deeper input throws
    /// ``CVManagedStructError/nestingTooDeep(entity:what:limit:)`` instead of exhausting the thread's stack.
    public static let maximumGraphDepth = 100

    /// How many related objects are being unboxed inside one another right now (see ``maximumGraphDepth``).
    var unboxingNesting = 0

    /// Creates a context over a store.
    public init(store: any Store) {
        self.store = store
        self.refined = store.refinements
        // A store's own index when it shares it: built once, with the boxing plans every context needs.
        let index = (store as? any ModelIndexSharing)?.sharedIndex ?? ModelIndex(store.model)
        self.index = index
        self.layouts = LayoutCache(shared: index.plans)
        handle.context = self
    }

    /// The reference to this context that its objects share (see ``ManagedObject/managedObjectContext``).
    let handle = ContextHandle()

    deinit {
        // Objects that outlive the context read it as gone (see `ContextHandle`).
        handle.context = nil
        // Objects link to each other strongly; break the cycles so that they are freed with the context.
        for objects in registry.values {
            // An entity without relationships has no links to break and nothing to read as empty later.
            guard let first = objects.first?.value, !first.info.entity.relationships.isEmpty else { continue }
            for object in objects.values {
                object.isDetached = true
                if !object.links.isEmpty { object.links.removeAll() }
                object.pending?.originalLinks.removeAll()
            }
        }
    }

    /// Every object registered in the context (fetched, inserted or boxed), deleted ones included until save.
    public var registeredObjects: [ManagedObject] {
        registry.values.flatMap(\.values)
    }

    /// The registered objects of the entity named `name`, by ID; `nil` when it has none or the model no such entity.
    func registered(_ name: String) -> Registry.Table? {
        index.entities[name].flatMap { registry[$0] }
    }

    /// The registered objects of one entity.
    public func registeredObjects(entityName: String) -> [ManagedObject] {
        registered(entityName).map { Array($0.values) } ?? []
    }

    /// The registered object with this ID, if any; never calls the store.
    ///
    /// The temporary ID of an object inserted here finds the object also after the save gave it a permanent ID.
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? {
        registered(id.entityName)?[permanentID(for: id)]
    }

    /// The permanent ID an object inserted here with temporary ID `id` got when saved; `id` itself otherwise.
    func permanentID(for id: ManagedObjectID) -> ManagedObjectID {
        guard id.isTemporary else { return id }
        return savedIDs[id] ?? id
    }

    /// Whether the context has unsaved inserts, changes or deletes.
    public var hasChanges: Bool {
        insertedList.contains { !$0.isDeletedFlag } || !deletedList.isEmpty
            || changedList.contains(where: \.hasPendingWrite)
    }

    /// Objects inserted and not yet saved.
    public var insertedObjects: [ManagedObject] { insertedList.filter { !$0.isDeletedFlag } }
    /// Stored objects with unsaved changes.
    public var updatedObjects: [ManagedObject] {
        changedList.filter { !$0.isDeletedFlag && !$0.isInsertedFlag && $0.hasChanges }
    }
    /// Stored objects deleted and not yet saved.
    public var deletedObjects: [ManagedObject] { deletedList }

    /// Inserts a new object of an entity, with the attributes' default values.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, or ``CVManagedStructError/abstractEntity(_:)`` for
    ///   an abstract entity.
    @discardableResult
    public func insert(entityName: String) throws -> ManagedObject {
        let info = try index.entity(entityName)
        guard !info.entity.isAbstract else { throw CVManagedStructError.abstractEntity(entityName) }
        let object = insertObject(info)
        addUnique(object)
        return object
    }

    /// Makes room for `count` more objects of an entity in the registry and, unless they are `fetched` (which
    /// join the unique index later, see ``uniqueIndex``), in the unique index.
    func reserveCapacity(_ count: Int, of info: EntityIndex, fetched: Bool = false) {
        guard count > 16, bulkInsert(of: info) == nil else { return }
        let wanted = Int.clampedSum(registry[info]?.count ?? 0, count)
        registry[info, default: [:]].reserveGrowing(wanted)
        guard !info.uniqueAttributes.isEmpty else { return }
        if fetched {
            unindexed.reserveGrowing(.clampedSum(unindexed.count, count))
        } else {
            let (entries, overflow) = count.multipliedReportingOverflow(by: info.uniqueAttributes.count)
            uniqueIndex.reserveGrowing(.clampedSum(uniqueIndex.count, overflow ? .max : entries))
        }
    }

    /// Adds the objects a fetch registered to the unique index, in registration order, as if each had been
    /// added when it was registered: every use of the index comes after this.
    private func indexRegistered() {
        guard !unindexed.isEmpty else { return }
        let objects = unindexed
        unindexed = []
        uniqueTables.indexed.reserveGrowing(uniqueTables.indexed.count + objects.count)
        for object in objects { addUnique(object) }
    }

    /// Inserts a new object of an entity with its default values, not yet in the unique index: the caller
    /// sets its unique attributes first, then calls `addUnique` (as ``insert(entityName:)`` does at once).
    func insertObject(_ info: EntityIndex) -> ManagedObject {
        let object = ManagedObject(info: info, objectID: .temporary(info.name), handle: handle)
        object.isInsertedFlag = true
        if bulkInsert(of: info) == nil { registry[info, default: [:]][object.objectID] = object }
        pendingInserts.append(object)
        return object
    }

    /// The object with this ID: the registered one, or one fetched from the store.
    ///
    /// - Throws: ``CVManagedStructError/objectNotFound(_:)`` when no stored row has the ID (or a temporary
    ///   ID is not registered here), ``CVManagedStructError/unknownEntity(_:)``, or the store's error.
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        let id = permanentID(for: id)
        if let object = registeredObject(for: id), !object.isDeletedFlag { return object }
        guard !id.isTemporary, registeredObject(for: id) == nil else { throw CVManagedStructError.objectNotFound(id) }
        _ = try index.entity(id.entityName)
        try fetchAndRegister([id])
        guard let object = registeredObject(for: id) else { throw CVManagedStructError.objectNotFound(id) }
        return object
    }

    // MARK: Change tracking

    /// Drops the inserted-list entries at and after `mark`.
    func removeInserted(from mark: Int) {
        pendingInserts.removeTail(from: mark)
    }

    /// Drops the deleted-list entries at and after `mark`.
    func removeDeleted(from mark: Int) {
        pendingDeletes.removeTail(from: mark)
    }

    func attributeDidChange(
        _ object: ManagedObject, at position: Int, key: String, from old: AttributeValue, to new: AttributeValue
    ) {
        markChanged(object)
        guard object.info.isUnique[position] else { return }
        let oldKey = UniqueValue(object.info, at: position, old)
        if uniqueIndex[oldKey] === object { uniqueIndex[oldKey] = nil }
        if !new.isNull { uniqueIndex[UniqueValue(object.info, at: position, new)] = object }
    }

    func markChanged(_ object: ManagedObject) {
        guard !object.isListedAsChanged, !object.isInsertedFlag else { return }
        object.isListedAsChanged = true
        pendingChanges.append(object)
    }

    /// The registered, not deleted object of an entity whose unique attribute `key` has `value`.
    func uniqueObject(_ info: EntityIndex, _ key: String, _ value: AttributeValue) -> ManagedObject? {
        guard let unique = UniqueValue(info, key, value) else { return nil }
        // A bulk save's entity has no other object here (see `BulkInsert`).
        if let bulk = bulkInsert(of: info) { return bulk.uniques[unique] }
        if uniqueTables.indexed.isEmpty, unindexed.count <= Self.unindexedScanLimit {
            return unindexedObject(unique)
        }
        return uniqueIndex[unique]
    }

    /// How many objects waiting to be indexed ``uniqueObject(_:_:_:)`` compares one by one while the index is
    /// empty, rather than indexing them first: a request reads an object and saves it as a struct, which looks
    /// it up by its unique value, and building the index for that one lookup cost more than comparing.
    static let unindexedScanLimit = 4

    /// The object ``uniqueIndex`` would hold for `unique` once the objects waiting were indexed (and it held no
    /// other): the last of them, not deleted, whose current value matches (indexing skips nulls, and a later
    /// object replaces an earlier one).
    private func unindexedObject(_ unique: UniqueValue) -> ManagedObject? {
        let position = Int(unique.position)
        for object in unindexed.reversed() where !object.isDeletedFlag && object.info.number == unique.entity {
            let value = object.attribute(at: position) ?? .null
            if !value.isNull, UniqueValue(object.info, at: position, value) == unique { return object }
        }
        return nil
    }

    /// Puts objects into the unique index on its next use (as objects a fetch registers).
    func indexLater(_ objects: [ManagedObject]) {
        guard let first = objects.first, !first.info.uniquePositions.isEmpty else { return }
        unindexed.reserveGrowing(unindexed.count + objects.count)
        for object in objects where !object.isDeletedFlag { unindexed.append(object) }
    }
}

/// A unique attribute value of an entity: the key of a context's unique index.
///
/// Strings compare by their exact bytes, as the database's UNIQUE constraint does (``ExactValue``).
struct UniqueValue: Hashable {
    /// The entity (``EntityIndex/number``) and the attribute's position in its layout: two integers, so
    /// that building, hashing and comparing a key retains and compares no name.
    let entity: Int32
    let position: Int32
    let value: ExactValue

    init(_ info: EntityIndex, at position: Int, _ value: AttributeValue) {
        self.entity = info.number
        self.position = Int32(truncatingIfNeeded: position)
        self.value = ExactValue(value)
    }

    /// The key of attribute `key`, or `nil` when the entity has no such attribute.
    init?(_ info: EntityIndex, _ key: String, _ value: AttributeValue) {
        // The key is nearly always one of the entity's few unique attributes: compared with their names
        // before the name is hashed for the layout's table (boxing asks this twice per unique struct).
        guard let position = try? info.uniquePosition(key) else { return nil }
        self.init(info, at: position, value)
    }

    /// Hashes the value alone: entity and key rarely tell two entries apart, and equality still compares them.
    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}

/// Contexts are confined to one task or thread at a time; use one context per task over a shared store.
@available(*, unavailable, message: "a context is used by one task at a time; give each task its own context")
extension ManagedObjectContext: Sendable {}
