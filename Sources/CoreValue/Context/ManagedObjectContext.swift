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
    /// The context's bookkeeping that every request reads and writes, in an object of its own whose accesses
    /// are not checked at run time (see ``ContextTables``); the properties below reach it.
    let tables = ContextTables()
    /// Registered objects by entity, then ID (see ``Registry``).
    var registry: Registry {
        _read { yield tables.registry }
        _modify { yield &tables.registry }
    }
    /// Objects inserted since the last save, in insertion order (deleted ones are skipped when saving).
    var pendingInserts: PendingList {
        _read { yield tables.pendingInserts }
        _modify { yield &tables.pendingInserts }
    }
    /// Stored objects changed since the last save.
    var pendingChanges: PendingList {
        _read { yield tables.pendingChanges }
        _modify { yield &tables.pendingChanges }
    }
    /// Stored objects deleted since the last save.
    var pendingDeletes: PendingList {
        _read { yield tables.pendingDeletes }
        _modify { yield &tables.pendingDeletes }
    }
    var insertedList: [ManagedObject] { pendingInserts.all }
    var changedList: [ManagedObject] { pendingChanges.all }
    var deletedList: [ManagedObject] { pendingDeletes.all }
    /// During a streamed bulk save, its entity and the part's objects by unique value (see ``BulkInsert``).
    var bulkInsert: BulkInsert?
    /// The permanent ID each object inserted here got when saved, by its temporary ID: a struct unboxed
    /// before the save still finds its object.
    var savedIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// IDs a store fetch did not return: not fetched again by relationship loading.
    var missingIDs: Set<ManagedObjectID> {
        _read { yield tables.missingIDs }
        _modify { yield &tables.missingIDs }
    }
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
    /// Struct layouts resolved against the model, per struct type (backed by the index's shared plans); made
    /// when the context first boxes a struct.
    package var layouts: LayoutCache {
        if let made = tables.layouts { return made }
        let made = LayoutCache(shared: index.plans)
        tables.layouts = made
        return made
    }

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
        // A store's own index when it shares it: built once, with the boxing plans every context needs.
        let index: ModelIndex
        if let sharing = store as? any ModelIndexSharing {
            index = sharing.sharedIndex
            refined = sharing.sharedRefinements
        } else {
            index = ModelIndex(store.model)
            refined = store.refinements
        }
        self.index = index
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

}

/// Contexts are confined to one task or thread at a time; use one context per task over a shared store.
@available(*, unavailable, message: "a context is used by one task at a time; give each task its own context")
extension ManagedObjectContext: Sendable {}
