/// The version a persistent struct was read at, which its `objectID` carries (``ManagedObjectID/version``), and
/// the version a save checks its row against.
///
/// A context checks an update or delete against the version it read the object at. A struct read elsewhere (by
/// another context, or sent back by a client) may have been read earlier: saved as it is, it would overwrite
/// what another writer saved since. So when a struct written into an object carries a version the context's
/// own reading does not vouch for, the save checks that version instead. The context vouches for its own
/// reading when it already held the object with changes of its own, or when the object's version came from
/// this context's own save (the struct may be this context's value from before that save).
extension ManagedObjectContext {
    /// The versions structs written into this context's objects were read at, by object, where they differ from
    /// the context's own; kept until the save that checks them succeeds, or ``rollback()``.
    var readVersions: [ObjectIdentifier: Int64] {
        get { tables.readVersions }
        _modify { yield &tables.readVersions }
    }

    /// Takes the version a struct written into `object` was read at (`id.version`), unless the context's own
    /// reading of the object vouches for the write: `fetchedNow` is whether the write's boxing fetched the object.
    func takeReadVersion(of id: ManagedObjectID, for object: ManagedObject, fetchedNow: Bool) {
        guard let read = id.version, read != object.version else { return }
        guard fetchedNow || (!object.isVersionFromOwnSave && !object.hasChanges) else { return }
        undoLog?.recordReadVersion(object, previous: readVersions[ObjectIdentifier(object)])
        readVersions[ObjectIdentifier(object)] = read
    }

    /// The version a save checks `object`'s row against.
    func checkedVersion(_ object: ManagedObject) -> Int64? {
        if readVersions.isEmpty { return object.version }
        return readVersions[ObjectIdentifier(object)] ?? object.version
    }

    /// Before merging `object` with its stored row after a conflict: a struct's read version leaves nothing to
    /// merge property by property (this context never read the values the struct was read with, so it cannot
    /// tell which properties the struct changed), so only the policies that take one side whole go on.
    ///
    /// - Throws: ``CVManagedStructError/Code/conflict`` under the per-property policies.
    func mergeReadVersion(of object: ManagedObject, stored: Int64?) throws {
        guard let read = readVersions[ObjectIdentifier(object)] else { return }
        switch mergePolicy {
        case .overwrite, .rollback:
            readVersions[ObjectIdentifier(object)] = nil
        case .error, .mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump:
            throw CVManagedStructError.conflict(
                entity: object.info.name,
                message: "\(object.objectID) was read at version \(read) but is now at version "
                    + "\(stored.map(String.init) ?? "none"); the \(mergePolicy) policy merges property by property, "
                    + "which needs the values it was read with: read it again, or save it under .overwrite")
        }
    }
}
