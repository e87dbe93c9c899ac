import Foundation

/// One struct to box, reflected into plain values: the first phase of boxing, which touches no context.
///
/// Boxing runs in three phases so that a failure leaves nothing half-filled: reflect every struct of the
/// tree into records (all type and key errors surface here), resolve the records' identities in batches
/// (registered objects, then one store call per entity), and only then write the values into objects.
final class BoxRecord {
    /// How a record finds its object.
    enum Identity {
        /// Always a new object.
        case new
        /// The stored object with this ID (a persistent struct with an `objectID`).
        case objectID(ManagedObjectID)
        /// The object whose unique attribute `key` has `value`, or a new one.
        case unique(key: String, value: AttributeValue)
    }

    /// A relationship destination: another record, or an object given as is.
    enum Target {
        case record(BoxRecord)
        case object(ManagedObject)
    }

    let info: EntityIndex
    let identity: Identity
    /// Each boxed attribute with its position in the entity's layout and its value.
    ///
    /// This and the fields below are unchecked for exclusive access: a record is built and written by one
    /// boxing, on one thread, and each of them is read or written once per struct.
    @exclusivity(unchecked) var attributes: [(Int, AttributeValue)] = []
    @exclusivity(unchecked) var relationships: [(String, [Target])] = []
    /// The attributes the struct type has, shared by every record of the type; `nil` when it has every
    /// attribute of the entity.
    @exclusivity(unchecked) var attributeNames: Set<String>?
    /// The object the record resolved to (phase two) or was written into (phase three).
    @exclusivity(unchecked) var object: ManagedObject?
    /// Whether phase three inserted the record's object: nothing to track or undo in its attributes.
    @exclusivity(unchecked) var isNew = false
    /// Whether the new object got all of ``attributes`` when it was made (see ``completeValues(identifiedAt:_:)``).
    @exclusivity(unchecked) var attributesWritten = false

    init(info: EntityIndex, identity: Identity) {
        self.info = info
        self.identity = identity
    }

    /// Every attribute's value in the entity's layout, for a new object to take at once, when the record sets
    /// each attribute once, in layout order, and the entity has no unique attribute but the identifier at
    /// `position` (whose value must be `identifier`): other unique attributes are indexed as they are
    /// assigned one by one. `nil` otherwise.
    func completeValues(identifiedAt position: Int?, _ identifier: AttributeValue) -> AttributeValues? {
        let layout = info.layout
        let uniques = info.uniquePositions
        let onlyTheIdentifier = position.map { uniques.count == 1 && uniques[0] == $0 } ?? uniques.isEmpty
        guard attributes.count == layout.count, onlyTheIdentifier else { return nil }
        var slots: [AttributeValue?] = []
        slots.reserveCapacity(layout.count)
        for (offset, (at, value)) in attributes.enumerated() {
            guard at == offset else { return nil }
            slots.append(value)
        }
        if let position, ExactValue(slots[position] ?? .null) != ExactValue(identifier) { return nil }
        return AttributeValues(layout: layout, complete: slots)
    }

    /// Whether two record trees box the same values: entities, attribute values (text by its bytes) and
    /// relationship members in the same order, identities aside. Walked without recursion.
    func hasSameContent(as other: BoxRecord) -> Bool {
        var pairs = [(self, other)]
        while let (left, right) = pairs.popLast() {
            guard left.info === right.info, left.attributes.count == right.attributes.count,
                left.relationships.count == right.relationships.count
            else { return false }
            for (a, b) in zip(left.attributes, right.attributes)
            where a.0 != b.0 || ExactValue(a.1) != ExactValue(b.1) {
                return false
            }
            for (a, b) in zip(left.relationships, right.relationships) {
                guard a.0 == b.0, a.1.count == b.1.count else { return false }
                for (x, y) in zip(a.1, b.1) {
                    switch (x, y) {
                    case (.record(let first), .record(let second)): pairs.append((first, second))
                    case (.object(let first), .object(let second)) where first === second: continue
                    default: return false
                    }
                }
            }
        }
        return true
    }

    /// This record and every record below it, depth first.
    var tree: [BoxRecord] {
        // A struct without relationships (a request's usual one) is its own tree: no stack to walk.
        if relationships.isEmpty { return [self] }
        var result: [BoxRecord] = []
        var stack = [self]
        while let next = stack.popLast() {
            result.append(next)
            for (_, targets) in next.relationships {
                for case .record(let child) in targets { stack.append(child) }
            }
        }
        return result
    }
}
