/// Objects with pending changes of one kind (inserted, changed or deleted): in the order they were added, and
/// per entity, so that a fetch looks only at the objects of its own entity.
struct PendingList {
    /// Every object, in the order added.
    private(set) var all: [ManagedObject] = []
    /// The entity of every object while they are all of one (a request's save usually is): ``all`` is then
    /// that entity's list too, and ``byEntity`` stays empty, so that such a save makes no dictionary.
    private var onlyEntity: Int32?
    /// Once objects of two entities were added: the objects of each entity (by ``EntityIndex/number``, not
    /// hashing a name per object), in the order added.
    private var byEntity: [Int32: [ManagedObject]] = [:]

    var count: Int { all.count }
    var isEmpty: Bool { all.isEmpty }

    /// The objects of one entity, in the order added.
    func of(_ entity: EntityIndex) -> [ManagedObject] {
        if all.isEmpty { return [] }
        if let onlyEntity { return onlyEntity == entity.number ? all : [] }
        return byEntity[entity.number] ?? []
    }

    mutating func append(_ object: ManagedObject) {
        let entity = object.info.number
        if all.isEmpty {
            onlyEntity = entity
        } else if let only = onlyEntity, only != entity {
            byEntity = [only: all]
            onlyEntity = nil
        }
        all.append(object)
        if onlyEntity == nil { byEntity[entity, default: []].append(object) }
    }

    mutating func removeAll() {
        all.removeAll()
        byEntity.removeAll()
        onlyEntity = nil
    }

    /// Removes the objects added at or after position `mark`.
    mutating func removeTail(from mark: Int) {
        guard mark < all.count else { return }
        if onlyEntity == nil {
            // Each entity's list got these objects appended in the same order: they are its tail too.
            for object in all[mark...].reversed() { byEntity[object.info.number]?.removeLast() }
        }
        all.removeSubrange(mark...)
    }
}
