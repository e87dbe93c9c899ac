import Foundation

extension ManagedObject {
    /// The destination of a to-one relationship, loading it if needed.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` for a key that is no to-one relationship,
    ///   or the store's error when loading fails.
    public func object(forKey key: String) throws -> ManagedObject? {
        let relationship = try info.relationship(key)
        guard !relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "to-one relationship", found: relationship.kind.rawValue)
        }
        return try related(key).first
    }

    /// The destinations of a to-many relationship (in order for an ordered one), loading them if needed.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` for a key that is no to-many
    ///   relationship, or the store's error when loading fails.
    public func objects(forKey key: String) throws -> [ManagedObject] {
        let relationship = try info.relationship(key)
        guard relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "to-many relationship", found: relationship.kind.rawValue)
        }
        return try related(key)
    }

    /// The destinations of an unordered (or ordered) to-many relationship as a set.
    ///
    /// - Throws: See ``objects(forKey:)``.
    public func objectSet(forKey key: String) throws -> Set<ManagedObject> {
        Set(try objects(forKey: key))
    }

    /// Sets the destinations of an unordered to-many relationship.
    ///
    /// - Throws: See ``setObject(_:forKey:)``.
    public func setObjectSet(_ objects: Set<ManagedObject>, forKey key: String) throws {
        try setObjects(Array(objects), forKey: key)
    }

    /// Sets or clears a to-one relationship; the inverse is updated on both sides.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``,
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for an object of another entity,
    ///   ``CVManagedStructError/invalidObject(message:)`` for an object of another context or a deleted one.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws {
        let relationship = try info.relationship(key)
        guard !relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "to-many value", found: "one object")
        }
        try setRelated(object.map { [$0] } ?? [], forKey: key)
    }

    /// Replaces the destinations of a to-many relationship (their order is kept for an ordered one); the
    /// inverse is updated on both sides. Objects no longer listed are unlinked, not deleted; but an empty list
    /// for a relationship whose delete rule is `cascade` deletes every member.
    ///
    /// - Throws: See ``setObject(_:forKey:)``.
    public func setObjects(_ objects: [ManagedObject], forKey key: String) throws {
        let relationship = try info.relationship(key)
        guard relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "one object", found: "\(objects.count) objects")
        }
        try setRelated(objects, forKey: key)
    }

    func related(_ key: String) throws -> [ManagedObject] {
        if let context = managedObjectContext { return try context.resolve(self, key) }
        // Without a context nothing can load a stored key: an object whose context was released (or any link
        // still unloaded) would read as empty, and a struct unboxed from it would unlink every member when
        // saved. That is an error, never an empty value.
        let current = links[key] ?? []
        if isDetached || current.contains(where: { $0.object == nil }) {
            throw CVManagedStructError.relationshipUnavailable(entity: info.name, key: key)
        }
        return current.compactMap(\.object)
    }

    func setRelated(_ objects: [ManagedObject], forKey key: String) throws {
        let relationship = try info.relationship(key)
        guard !isDeletedFlag else { throw CVManagedStructError.invalidObject(message: "\(objectID) was deleted") }
        for object in objects {
            guard
                object.entity.name == relationship.destination
                    || info.isDestination(relationship, kindOf: object.entity.name)
            else {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: key, expected: relationship.destination, found: object.entity.name)
            }
            guard object.managedObjectContext === managedObjectContext, !object.isDeletedFlag else {
                throw CVManagedStructError.invalidObject(
                    message: "\(object.objectID) is deleted or belongs to another context than \(objectID)")
            }
        }
        if let context = managedObjectContext {
            try context.relate(self, relationship, to: objects)
        } else {
            links[key] = objects.map(Link.object)
        }
    }

    /// Replaces the links of a relationship, recording the change.
    func replaceLinks(_ key: String, _ newLinks: [Link]) {
        recordOriginalLinks(key)
        links[key] = newLinks
    }

    /// Removes the link to `object` from a relationship, recording the change.
    func removeLink(to object: ManagedObject, _ key: String) {
        guard let position = links[key]?.firstIndex(where: { $0.refers(to: object) }) else { return }
        recordOriginalLinks(key)
        links[key]?.remove(at: position)
    }

    /// Removes the links to several objects from a relationship in one pass, recording the change.
    func removeLinks(to objects: [ManagedObject], _ key: String) {
        guard let current = links[key], !objects.isEmpty else { return }
        if objects.count == 1 {
            removeLink(to: objects[0], key)
            return
        }
        let identities = Set(objects.map(ObjectIdentifier.init))
        let keys = Set(objects.compactMap(\.objectID.primaryKey))
        let kept = current.filter { link in
            switch link {
            case .object(let linked): return !identities.contains(ObjectIdentifier(linked))
            case .key(let primaryKey): return !keys.contains(primaryKey)
            }
        }
        guard kept.count != current.count else { return }
        recordOriginalLinks(key)
        links[key] = kept
    }

    /// Forgets the recorded original links of `key` when the current links are the same again.
    func dropUnchangedLinks(_ key: String) {
        guard let original = originalLinks[key] else { return }
        let current = links[key] ?? []
        guard original.isSame(as: current) else { return }
        originalLinks[key] = nil
    }

    /// Appends a link to `object`, recording the change (in place: appending n links costs O(n)).
    func appendLink(to object: ManagedObject, _ key: String) {
        recordOriginalLinks(key)
        links[key, default: []].append(.object(object))
    }

    private func recordOriginalLinks(_ key: String) {
        managedObjectContext?.undoLog?.recordLinks(self, key)
        if originalLinks[key] == nil { originalLinks[key] = links[key] ?? [] }
        managedObjectContext?.markChanged(self)
    }
}
