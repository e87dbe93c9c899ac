/// Objects with pending changes of one kind (inserted, changed or deleted): in the order they were added, and
/// per entity, so that a fetch looks only at the objects of its own entity.
struct PendingList {
    /// Every object, in the order added.
    private(set) var all: [ManagedObject] = []
    /// The objects of each entity (by ``EntityIndex/number``, not hashing a name per object), in the order
    /// added.
    private var byEntity: [Int32: [ManagedObject]] = [:]

    var count: Int { all.count }
    var isEmpty: Bool { all.isEmpty }

    /// The objects of one entity, in the order added.
    func of(_ entity: EntityIndex) -> [ManagedObject] { byEntity[entity.number] ?? [] }

    mutating func append(_ object: ManagedObject) {
        all.append(object)
        byEntity[object.info.number, default: []].append(object)
    }

    mutating func removeAll() {
        all.removeAll()
        byEntity.removeAll()
    }

    /// Removes the objects added at or after position `mark`.
    mutating func removeTail(from mark: Int) {
        guard mark < all.count else { return }
        // Each entity's list got these objects appended in the same order: they are its tail too.
        for object in all[mark...].reversed() { byEntity[object.info.number]?.removeLast() }
        all.removeSubrange(mark...)
    }
}
