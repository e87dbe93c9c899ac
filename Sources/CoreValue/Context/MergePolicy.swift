/// What a context's save does when another writer changed a row since the context read it: Core Data's merge
/// policies, per property.
///
/// A property counts as changed by the other writer when its stored value differs from the one this context
/// read; as changed here when this context set it since. See the table in the Concurrency article.
public enum MergePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Throw ``CVManagedStructError/Code/conflict`` and write nothing (Core Data's `NSErrorMergePolicy`): the
    /// default.
    case error
    /// Per property, the other writer's change wins: properties it changed take the stored value, the others
    /// keep this context's changes (`NSMergeByPropertyStoreTrumpMergePolicy`).
    case mergeByPropertyStoreTrump
    /// Per property, this context's change wins: properties changed here keep their values, the others take
    /// the stored ones (`NSMergeByPropertyObjectTrumpMergePolicy`).
    case mergeByPropertyObjectTrump
    /// This context's object wins whole: every property is written as this context holds it, changed here or
    /// not (`NSOverwriteMergePolicy`).
    case overwrite
    /// The stored row wins whole: this context's changes to the object are dropped and it takes the stored
    /// values (`NSRollbackMergePolicy`); the save goes on with the other objects.
    case rollback

    /// Whether this context's value of a property wins, given who changed it.
    func keepsOurs(changedHere: Bool, changedThere: Bool) -> Bool {
        switch self {
        case .error, .rollback: return false
        case .overwrite: return true
        case .mergeByPropertyObjectTrump: return changedHere
        case .mergeByPropertyStoreTrump: return changedHere && !changedThere
        }
    }
}

extension ManagedObjectContext {
    /// How many times a save merges and tries again before it throws the conflict.
    static let maximumMergeAttempts = 5

    /// After a conflict: reads the stored rows of the objects the save checks against a version, merges those
    /// another writer moved on with ``mergePolicy``, and returns whether any was (a save then tries again,
    /// checked against the new versions).
    ///
    /// - Throws: The conflict, when a row another writer deleted is one this context updates, or one it
    ///   deletes is a row another writer changed and the policy keeps the store's values (a delete cannot be
    ///   merged per property); the store's errors.
    func mergeConflicts() throws -> Bool {
        let updated = changedList.filter {
            !$0.isDeletedFlag && !$0.isInsertedFlag && $0.hasChanges && !$0.isIdentifiedByValue
        }
        let deleted = deletedList
        let rows = try store.fetch(ids: (updated + deleted).map(\.objectID))
        let stored = Dictionary(rows.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var merged = false
        for object in deleted {
            guard let row = stored[object.objectID], row.version != checkedVersion(object) else { continue }
            try mergeReadVersion(of: object, stored: row.version)
            guard mergePolicy.keepsOurs(changedHere: true, changedThere: true) else {
                throw CVManagedStructError.conflict(
                    entity: object.info.name,
                    message: "\(object.objectID) was changed by another writer; the \(mergePolicy) merge policy keeps "
                        + "its values, so it is not deleted")
            }
            object.version = row.version
            merged = true
        }
        for object in updated {
            guard let row = stored[object.objectID] else {
                throw CVManagedStructError.conflict(
                    entity: object.info.name, message: "\(object.objectID) was deleted by another writer")
            }
            guard row.version != checkedVersion(object) else { continue }
            try mergeReadVersion(of: object, stored: row.version)
            try merge(object, with: row)
            merged = true
        }
        return merged
    }

    /// Merges one object with its stored row, property by property, and takes the row's version.
    private func merge(_ object: ManagedObject, with row: RowSnapshot) throws {
        dropUnique(object)
        defer { addUnique(object) }
        for (position, key) in object.info.layout.names.enumerated() {
            let stored = row.attributes[key] ?? .null
            let current = object.attribute(at: position) ?? .null
            let original = object.originalAttributes[key]
            let ours = mergePolicy.keepsOurs(
                changedHere: original != nil, changedThere: stored != (original ?? current))
            if ours {
                object.originalAttributes[key] = current == stored ? nil : stored
            } else {
                object.setAttribute(stored, at: position)
                object.originalAttributes[key] = nil
            }
        }
        for relationship in object.info.entity.relationships {
            try merge(relationship, of: object, with: row)
        }
        object.version = row.version
        object.isVersionFromOwnSave = false
        mergedObjects.insert(ObjectIdentifier(object))
    }

    /// Merges one relationship as a whole: the side that wins keeps its destinations. The stored ones are set
    /// through the relationship's setter, so the inverse side of this context's objects follows.
    private func merge(_ relationship: Relationship, of object: ManagedObject, with row: RowSnapshot) throws {
        let name = relationship.name
        let destination = relationship.destination
        let stored: [Int64] =
            relationship.isToMany ? row.toMany[name] ?? [] : (row.toOne[name] ?? nil).map { [$0] } ?? []
        let current = keys(object.links[name] ?? [])
        let original = object.originalLinks[name].map(keys)
        func same(_ left: [Int64?], _ right: [Int64?]) -> Bool {
            relationship.kind == .unorderedToMany
                ? left.count == right.count && Set(left) == Set(right) : left == right
        }
        let storedKeys = stored.map { Optional($0) }
        let ours = mergePolicy.keepsOurs(
            changedHere: original != nil, changedThere: !same(storedKeys, original ?? current))
        if ours {
            // Written as this context holds it (the overwrite policy writes even an unchanged list again).
            if !same(storedKeys, current), object.originalLinks[name] == nil {
                object.originalLinks[name] = stored.map(Link.key)
            }
            return
        }
        guard !same(storedKeys, current) else {
            object.originalLinks[name] = nil
            return
        }
        let destinations = try stored.map { try existingObject(with: .permanent(destination, $0)) }
        if relationship.isToMany {
            try object.setObjects(destinations, forKey: name)
        } else {
            try object.setObject(destinations.first, forKey: name)
        }
    }

    /// The primary keys of links (`nil` for an object not saved yet).
    private func keys(_ links: [Link]) -> [Int64?] {
        links.map { link in
            switch link {
            case .key(let key): return key
            case .object(let object): return object.objectID.primaryKey
            }
        }
    }
}
