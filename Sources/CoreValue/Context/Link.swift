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
