extension ManagedObjectContext {
    /// The objects a relationship of `object` links to, loading missing ones first.
    ///
    /// Loading is batched: one `fetch(ids:)` loads the missing destinations of this relationship for every
    /// registered object of the entity (up to ``batchSize`` IDs), so walking a relationship over n fetched
    /// objects costs one store call, not n. Deleted objects are left out.
    func resolve(_ object: ManagedObject, _ key: String) throws -> [ManagedObject] {
        guard let relationship = object.info.relationships[key] else {
            throw CVManagedStructError.unknownKey(entity: object.info.name, key: key)
        }
        let destination = relationship.destination
        let links = object.links[key] ?? []
        let needsLoading = {
            let registered = self.registered(destination) ?? [:]
            return links.contains { isUnresolved($0, destination, in: registered) }
        }()
        if needsLoading { try loadBatch(for: object, key, destination) }
        var result: [ManagedObject] = []
        result.reserveCapacity(links.count)
        var resolvedLinks: [Link] = []
        resolvedLinks.reserveCapacity(links.count)
        var rewrote = false
        // The destination's registry looked up once, not once per link.
        let registered = self.registered(destination) ?? [:]
        for link in links {
            switch link {
            case .object(let linked):
                resolvedLinks.append(link)
                if !linked.isDeletedFlag { result.append(linked) }
            case .key(let primaryKey):
                if let linked = registered[.permanent(destination, primaryKey)]
                    ?? registeredSubentityObject(destination, primaryKey)
                {
                    resolvedLinks.append(.object(linked))
                    rewrote = true
                    if !linked.isDeletedFlag { result.append(linked) }
                } else {
                    resolvedLinks.append(link)
                }
            }
        }
        if rewrote { object.links[key] = resolvedLinks }
        return result
    }

    private func isUnresolved(_ link: Link, _ destination: String) -> Bool {
        isUnresolved(link, destination, in: registered(destination) ?? [:])
    }

    /// Whether a link is a stored key of a row neither `registered` (the destination's registry) nor known
    /// to be missing.
    private func isUnresolved(
        _ link: Link, _ destination: String, in registered: [ManagedObjectID: ManagedObject]
    ) -> Bool {
        guard case .key(let primaryKey) = link else { return false }
        let id = ManagedObjectID.permanent(destination, primaryKey)
        return registered[id] == nil && (missingIDs.isEmpty || !missingIDs.contains(id))
            && registeredSubentityObject(destination, primaryKey) == nil
    }

    private func loadBatch(for object: ManagedObject, _ key: String, _ destination: String) throws {
        var wanted: [ManagedObjectID] = []
        var seen = Set<ManagedObjectID>()
        var owners: [Int64] = []
        // The destination's registry is held only while collecting: registering the rows changes it, and a
        // copy still held then would be copied whole.
        do {
            let registered = self.registered(destination) ?? [:]
            func collect(_ owner: ManagedObject) {
                let links = owner.links[key] ?? []
                seen.reserveGrowing(seen.count + links.count)
                var needed = false
                for link in links where isUnresolved(link, destination, in: registered) {
                    guard case .key(let primaryKey) = link else { continue }
                    needed = true
                    let id = ManagedObjectID.permanent(destination, primaryKey)
                    if seen.insert(id).inserted { wanted.append(id) }
                }
                if needed, let key = owner.objectID.primaryKey { owners.append(key) }
            }
            collect(object)
            for other in (registry[object.info] ?? [:]).values where wanted.count < Self.batchSize {
                if other !== object { collect(other) }
            }
        }
        try fetchAndRegister(wanted, &seen, relatedBy: key, of: object.info, owners: owners)
    }

    /// Registers the rows `wanted` (the unresolved keys of relationship `key` of the rows `owners`; `remaining`
    /// holds the same IDs, and loses those found): through the relationship when the store can read it that
    /// way (``StoreRefinements/fetch(related:of:owners:)``), keeping only the rows wanted and fetching by ID any the
    /// relationship no longer links (a concurrent change), so the result is what fetching `wanted` by ID
    /// gives; by ID otherwise.
    private func fetchAndRegister(
        _ wanted: [ManagedObjectID], _ remaining: inout Set<ManagedObjectID>, relatedBy key: String,
        of info: EntityIndex, owners: [Int64]
    ) throws {
        guard !wanted.isEmpty else { return }
        // Rows of a destination with subentities come back named by their own entity, not the one asked for.
        guard wanted.count <= Self.batchSize, owners.count <= Self.batchSize, !linksSubentities(info, key),
            var kept = try refined.fetch(related: key, of: info.name, owners: owners)
        else {
            return try fetchAndRegister(wanted)
        }
        // Filtered in place: the rows kept are moved, not copied (each copy retained its values).
        kept.removeAll { remaining.remove($0.id) == nil }
        if let first = kept.first { _ = try register(kept, of: try index.entity(first.id.entityName)) }
        if !remaining.isEmpty { try fetchAndRegister(wanted.filter(remaining.contains)) }
    }

    /// Sets the links of a relationship and keeps its inverse consistent on every object involved.
    ///
    /// Objects whose inverse links must change but are not registered yet are fetched first, in one call,
    /// so that no object is changed if that fetch fails.
    func relate(_ object: ManagedObject, _ relationship: Relationship, to newObjects: [ManagedObject]) throws {
        let key = relationship.name
        var objects: [ManagedObject] = []
        var newIDs = Set<ObjectIdentifier>()
        for candidate in newObjects where newIDs.insert(ObjectIdentifier(candidate)).inserted {
            objects.append(candidate)
        }
        if objects.isEmpty, relationship.isToMany, relationship.deleteRule == .cascade {
            // Clearing a cascading to-many deletes its members (DESIGN section 4), all at once: one batched
            // unlink, and nothing is deleted if a deny rule refuses any of them.
            try delete(try resolve(object, key))
        }
        let old = object.links[key] ?? []
        if old.count == objects.count, zip(old, objects).allSatisfy({ $0.refers(to: $1) }) { return }
        guard let inverse = object.info.inverses[key] else {
            object.replaceLinks(key, objects.map(Link.object))
            return
        }
        let newKeys = Set(objects.compactMap(\.objectID.primaryKey))
        let removed = old.filter { link in
            switch link {
            case .object(let linked): return !newIDs.contains(ObjectIdentifier(linked))
            case .key(let primaryKey): return !newKeys.contains(primaryKey)
            }
        }
        var oldIDs = Set<ObjectIdentifier>()
        var oldKeys = Set<Int64>()
        for link in old {
            switch link {
            case .object(let linked): oldIDs.insert(ObjectIdentifier(linked))
            case .key(let primaryKey): oldKeys.insert(primaryKey)
            }
        }
        let added = objects.filter { candidate in
            !oldIDs.contains(ObjectIdentifier(candidate))
                && !(candidate.objectID.primaryKey.map { oldKeys.contains($0) } ?? false)
        }
        var wanted: [ManagedObjectID] = []
        for link in removed where isUnresolved(link, relationship.destination) {
            if case .key(let primaryKey) = link { wanted.append(.permanent(relationship.destination, primaryKey)) }
        }
        if !inverse.isToMany {
            for member in added {
                for link in member.links[inverse.name] ?? [] where isUnresolved(link, object.info.name) {
                    if case .key(let primaryKey) = link { wanted.append(.permanent(object.info.name, primaryKey)) }
                }
            }
        }
        if !wanted.isEmpty { try fetchAndRegister(wanted) }

        object.replaceLinks(key, objects.map(Link.object))
        for link in removed {
            guard let member = self.object(for: link, relationship.destination) else { continue }
            member.removeLink(to: object, inverse.name)
        }
        // Members taken from other owners, per owner: each owner's list is filtered once, not once per member.
        var taken: [ObjectIdentifier: (owner: ManagedObject, members: [ManagedObject])] = [:]
        var owners: [ManagedObject] = []
        for member in added {
            if inverse.isToMany {
                member.appendLink(to: object, inverse.name)
                continue
            }
            for link in member.links[inverse.name] ?? [] {
                if let previous = self.object(for: link, object.info.name), previous !== object {
                    if taken[ObjectIdentifier(previous)] == nil {
                        taken[ObjectIdentifier(previous)] = (previous, [])
                        owners.append(previous)
                    }
                    taken[ObjectIdentifier(previous)]?.members.append(member)
                }
            }
            member.replaceLinks(inverse.name, [.object(object)])
        }
        for previous in owners {
            previous.removeLinks(to: taken[ObjectIdentifier(previous)]?.members ?? [], key)
        }
    }

    /// The registered object a link points to, if any.
    func object(for link: Link, _ entityName: String) -> ManagedObject? {
        switch link {
        case .object(let object): return object
        case .key(let primaryKey):
            return registered(entityName)?[.permanent(entityName, primaryKey)]
                ?? registeredSubentityObject(entityName, primaryKey)
        }
    }

    /// Makes sure the objects linked by these relationships of these objects, and for to-one inverses the
    /// objects those link back to, are registered: one store call for everything missing.
    func prefetchLinks(of objects: [(ManagedObject, [String])]) throws {
        var wanted: [ManagedObjectID] = []
        var seen = Set<ManagedObjectID>()
        for (object, keys) in objects {
            for key in keys {
                guard let relationship = object.info.relationships[key], object.info.inverses[key] != nil else {
                    continue
                }
                for link in object.links[key] ?? [] where isUnresolved(link, relationship.destination) {
                    if case .key(let primaryKey) = link {
                        let id = ManagedObjectID.permanent(relationship.destination, primaryKey)
                        if seen.insert(id).inserted { wanted.append(id) }
                    }
                }
            }
        }
        if !wanted.isEmpty { try fetchAndRegister(wanted) }
    }
}
