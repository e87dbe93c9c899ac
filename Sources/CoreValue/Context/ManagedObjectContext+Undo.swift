/// What one struct-level operation did to a context, so that a failure can take exactly that back.
///
/// ``ManagedObjectContext/save()`` leaves its changes pending when it fails (the caller may fix and retry).
/// A struct's `save`, `saveAll` or `delete` is one call that both changes the context and saves it; when it
/// fails, its own inserts and deletes must not stay pending, or a retry would insert a second row and the
/// next unrelated save would commit the delete.
final class UndoLog {
    /// How many objects were in the inserted list when the operation began.
    let insertedMark: Int
    /// How many objects were in the deleted list when the operation began.
    let deletedMark: Int
    /// Objects the operation deleted, in order.
    var victims: [ManagedObject] = []
    /// Relationship links as they were before the operation's deletes unlinked them, in order.
    var links: [(object: ManagedObject, key: String, links: [Link]?, original: [Link]?)] = []

    init(insertedMark: Int, deletedMark: Int) {
        self.insertedMark = insertedMark
        self.deletedMark = deletedMark
    }
}

extension ManagedObjectContext {
    /// Runs a struct-level operation; if it throws, forgets the objects it inserted and restores the objects
    /// it deleted, then rethrows. Changes made before the operation stay pending.
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
        for entry in log.links.reversed() {
            entry.object.links[entry.key] = entry.links
            entry.object.originalLinks[entry.key] = entry.original
        }
        for victim in log.victims.reversed() where victim.isDeletedFlag {
            victim.isDeletedFlag = false
            if victim.isInsertedFlag { registry[victim.info.name, default: [:]][victim.objectID] = victim }
            addUnique(victim)
        }
        if deletedList.count > log.deletedMark { removeDeleted(from: log.deletedMark) }
        if insertedList.count > log.insertedMark { forgetInserted(from: log.insertedMark) }
    }

    /// Forgets the objects inserted at or after `mark`: they leave the registry and the unique index, and every
    /// object linked to them through an inverse relationship forgets the link.
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
            registry[object.info.name]?[object.objectID] = nil
            object.isDeletedFlag = true
            object.isInsertedFlag = false
        }
        removeInserted(from: mark)
    }

    /// Records, for a pending undo, the links of `object` under `key` before a delete changes them.
    func recordLinksForUndo(_ object: ManagedObject, _ key: String) {
        undoLog?.links.append((object, key, object.links[key], object.originalLinks[key]))
    }
}
