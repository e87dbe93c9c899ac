/// What one struct-level operation did to a context, so that a failure can take exactly that back.
///
/// ``ManagedObjectContext/save()`` leaves its changes pending when it fails (the caller may fix and retry).
/// A struct's `save`, `saveAll` or `delete` is one call that both changes the context and saves it; when it
/// fails, its own changes must not stay pending, or a retry would insert a second row and the next unrelated
/// save would commit its delete or its half-written values.
final class UndoLog {
    /// One value as it was before the operation first changed it.
    enum Entry {
        case attribute(ManagedObject, String, value: AttributeValue, original: AttributeValue?)
        case links(ManagedObject, String, links: [Link]?, original: [Link]?)
        case identifiedByValue(ManagedObject, Bool, attributes: Set<String>?, relationships: Set<String>)
        /// The read version a struct gave an object (``ManagedObjectContext/readVersions``) before this one.
        case readVersion(ManagedObject, Int64?)

        /// The attribute or relationship the entry keeps the first value of; `nil` for the others.
        var touched: Touched? {
            switch self {
            case .attribute(let object, let key, _, _):
                Touched(object: ObjectIdentifier(object), key: key, isLink: false)
            case .links(let object, let key, _, _):
                Touched(object: ObjectIdentifier(object), key: key, isLink: true)
            case .identifiedByValue, .readVersion: nil
            }
        }
    }

    /// How many objects were in the inserted list when the operation began.
    let insertedMark: Int
    /// How many objects were in the deleted list when the operation began.
    let deletedMark: Int
    /// Objects the operation deleted, in order.
    var victims: [ManagedObject] = []
    /// First values of what the operation changed, in order.
    private(set) var entries: [Entry] = []
    /// The attributes and relationships already recorded: only the first change of each counts. While there
    /// are few entries they are looked through (a request changes a few values of one object: comparing its
    /// kept key names costs less than hashing them, and no list of its own is made); past ``listedLimit``, a
    /// set of them.
    private var recorded: Set<Touched>?
    private static var listedLimit: Int { 16 }

    struct Touched: Hashable {
        let object: ObjectIdentifier
        let key: String
        let isLink: Bool
    }

    init(insertedMark: Int, deletedMark: Int) {
        self.insertedMark = insertedMark
        self.deletedMark = deletedMark
        // A request's save of one struct records about three entries: room made once, not grown twice.
        entries.reserveCapacity(4)
    }

    /// Records an attribute's value before the operation's first change of it: `value` is the object's value
    /// now, `original` its value before the first unsaved change (``ManagedObject/originalAttributes``), both
    /// as the caller, about to change the value, has already read them.
    func recordAttribute(_ object: ManagedObject, _ key: String, value: AttributeValue, original: AttributeValue?) {
        guard isFirst(Touched(object: ObjectIdentifier(object), key: key, isLink: false)) else { return }
        entries.append(.attribute(object, key, value: value, original: original))
    }

    /// Records a relationship's links before the operation's first change of them.
    func recordLinks(_ object: ManagedObject, _ key: String) {
        guard isFirst(Touched(object: ObjectIdentifier(object), key: key, isLink: true)) else { return }
        entries.append(.links(object, key, links: object.links[key], original: object.originalLinks[key]))
    }

    /// Whether `touched` is recorded for the first time (it is recorded now).
    private func isFirst(_ touched: Touched) -> Bool {
        if let inserted = recorded?.insert(touched).inserted { return inserted }
        if entries.count < Self.listedLimit {
            for entry in entries where entry.touched == touched { return false }
            return true
        }
        var set = Set(entries.compactMap(\.touched))
        let inserted = set.insert(touched).inserted
        recorded = set
        return inserted
    }

    /// Records the read version a struct gave an object before the operation sets another.
    func recordReadVersion(_ object: ManagedObject, previous: Int64?) {
        entries.append(.readVersion(object, previous))
    }

    /// Records whether an object was identified by value before the operation set it.
    func recordIdentifiedByValue(_ object: ManagedObject) {
        guard !object.isIdentifiedByValue else {
            // Already identified by value before this operation: only the attribute set can grow; keep it.
            entries.append(
                .identifiedByValue(
                    object, true, attributes: object.identifiedAttributes, relationships: object.identifiedRelationships
                ))
            return
        }
        entries.append(.identifiedByValue(object, false, attributes: nil, relationships: []))
    }
}

extension ManagedObjectContext {
    /// Runs a struct-level operation; if it throws, forgets the objects it inserted, restores the objects it
    /// deleted and the values and links it changed, then rethrows. Changes made before the operation stay
    /// pending.
    func undoingOnFailure<T>(_ body: () throws -> T) throws -> T {
        // A nested call is part of the outer operation: the outer one undoes everything.
        if undoLog != nil { return try body() }
        let log = UndoLog(insertedMark: insertedList.count, deletedMark: deletedList.count)
        undoLog = log
        defer { undoLog = nil }
        do {
            return try body()
        } catch {
            undo(log)
            throw error
        }
    }

    private func undo(_ log: UndoLog) {
        // Objects whose attributes come back leave the unique index first and return to it at the end.
        var touched: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for case .attribute(let object, _, _, _) in log.entries where seen.insert(ObjectIdentifier(object)).inserted {
            dropUnique(object)
            touched.append(object)
        }
        for entry in log.entries.reversed() {
            switch entry {
            case .attribute(let object, let key, let value, let original):
                object.changeAttributes { $0[key] = value }
                object.originalAttributes[key] = original
            case .links(let object, let key, let links, let original):
                object.links[key] = links
                object.originalLinks[key] = original
            case .identifiedByValue(let object, let flag, let attributes, let relationships):
                object.isIdentifiedByValue = flag
                object.identifiedAttributes = attributes
                object.identifiedRelationships = relationships
            case .readVersion(let object, let version):
                readVersions[ObjectIdentifier(object)] = version
            }
        }
        for victim in log.victims.reversed() where victim.isDeletedFlag {
            victim.isDeletedFlag = false
            if victim.isInsertedFlag { registry[victim.info, default: [:]][victim.objectID] = victim }
        }
        for object in touched + log.victims { addUnique(object) }
        if deletedList.count > log.deletedMark { removeDeleted(from: log.deletedMark) }
        if insertedList.count > log.insertedMark { forgetInserted(from: log.insertedMark) }
    }

    /// Forgets the objects inserted at or after `mark`: they leave the registry and the unique index, and every
    /// object still linked to them through an inverse relationship forgets the link.
    private func forgetInserted(from mark: Int) {
        let forgotten = insertedList[mark...].filter { !$0.isDeletedFlag }
        let ids = Set(forgotten.map(ObjectIdentifier.init))
        for object in forgotten {
            for (key, links) in object.links {
                guard let inverse = object.info.inverses[key] else { continue }
                for case .object(let linked) in links where !ids.contains(ObjectIdentifier(linked)) {
                    linked.removeLinks(to: [object], inverse.name)
                    linked.dropUnchangedLinks(inverse.name)
                }
            }
        }
        for object in forgotten {
            dropUnique(object)
            registry.remove(object)
            object.isDeletedFlag = true
            object.isInsertedFlag = false
        }
        removeInserted(from: mark)
    }
}
