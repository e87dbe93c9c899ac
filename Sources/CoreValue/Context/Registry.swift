/// A context's registered objects: for each entity, its objects by ID.
///
/// The entities are a short list searched by ``EntityIndex/number``: a context holds objects of a few
/// entities, and comparing a few integers costs less than hashing the entity's name, which a request's read
/// did three times (once to find the entity's table, twice to take it out and put it back). Each table
/// changes in place in the list.
struct Registry {
    typealias Table = [ManagedObjectID: ManagedObject]

    /// The entities' numbers, in the order their first object was registered; ``tables`` in the same order.
    private var numbers: [Int32] = []
    private var tables: [Table] = []

    /// Where `entity`'s table is in ``tables``.
    private func slot(_ entity: EntityIndex) -> Int? {
        numbers.firstIndex(of: entity.number)
    }

    /// `entity`'s objects; `nil` when none was ever registered.
    subscript(_ entity: EntityIndex) -> Table? {
        slot(entity).map { tables[$0] }
    }

    /// `entity`'s objects, changed in place; an entity without any starts with an empty table.
    subscript(_ entity: EntityIndex, default empty: Table) -> Table {
        get { self[entity] ?? empty }
        _modify {
            let slot = slot(entity) ?? add(entity, empty)
            yield &tables[slot]
        }
    }

    /// Every entity's objects.
    var values: [Table] { tables }

    /// Takes `entity`'s table out, leaving it empty, so that it can change while other entities' tables change
    /// too (and is not copied on write); ``put(_:for:)`` puts it back.
    mutating func take(_ entity: EntityIndex) -> Table {
        guard let slot = slot(entity) else { return [:] }
        var table: Table = [:]
        swap(&table, &tables[slot])
        return table
    }

    /// Puts `entity`'s table back (see ``take(_:)``).
    mutating func put(_ table: Table, for entity: EntityIndex) {
        if let slot = slot(entity) {
            tables[slot] = table
        } else if !table.isEmpty {
            add(entity, table)
        }
    }

    /// Forgets `object`'s registration.
    mutating func remove(_ object: ManagedObject) {
        guard let slot = slot(object.info) else { return }
        tables[slot][object.objectID] = nil
    }

    @discardableResult
    private mutating func add(_ entity: EntityIndex, _ table: Table) -> Int {
        numbers.append(entity.number)
        tables.append(table)
        return tables.count - 1
    }
}
