extension ManagedObjectContext {
    /// Writes every pending insert, change and delete in one `Store.apply(_:)` call: everything or nothing.
    ///
    /// Every changed stored object is checked against the version it was read at, also when only its links
    /// changed (a member list, or a to-one stored on the other side); objects last written by a unique struct
    /// are not (last writer wins). On success inserted objects get permanent IDs and every written object its
    /// new version. On failure
    /// nothing is changed in the store and every change stays pending, so the caller may fix and retry, or
    /// ``rollback()``.
    ///
    /// With a ``mergePolicy`` other than ``MergePolicy/error``, a version conflict is not thrown at once: the
    /// stored rows of the objects checked are read (one statement per entity), those another writer moved on
    /// are merged per the policy, property by property, and the save runs again against the new versions, up
    /// to five times. A merged object holds the merged values afterwards (and keeps them pending if the save
    /// still fails). A row another writer deleted is still a conflict.
    ///
    /// - Throws: ``CVManagedStructError/missingValue(entity:key:)`` for a required attribute without a value
    ///   (found by the store before it writes anything), ``CVManagedStructError/conflict(entity:message:)`` when another context
    ///   changed or deleted a row since it was read, or the store's error.
    public func save() throws {
        mergedObjects = []
        var attempt = 1
        while true {
            do {
                return try saveOnce()
            } catch let error as CVManagedStructError
                where error.code == .conflict && mergePolicy != .error && attempt < Self.maximumMergeAttempts
            {
                attempt += 1
                guard try mergeConflicts() else { throw error }
            }
        }
    }

    /// One attempt of ``save()-6ko1p``: the pending changes as one change set.
    private func saveOnce() throws {
        let inserted = insertedObjects
        // Stored objects a unique struct wrote are saved even when no value changed (`hasPendingWrite`).
        let changed = changedList.filter { !$0.isDeletedFlag && !$0.isInsertedFlag && $0.hasPendingWrite }
        let deleted = deletedList
        var changes = ChangeSet()
        changes.inserts.reserveCapacity(inserted.count)
        for object in inserted {
            changes.inserts.append(insertChange(object))
            changes.relationships += memberLists(object, keys: object.info.relationships.keys.sorted())
        }
        for object in changed {
            var attributes: AttributeValues
            if object.isIdentifiedByValue, object.identifiedAttributes == nil {
                // A unique struct with every attribute wrote the row: all of its values, shared as they are.
                attributes = object.attributeValues
            } else {
                var keys = Set(object.originalAttributes.keys)
                if object.isIdentifiedByValue, let written = object.identifiedAttributes { keys.formUnion(written) }
                attributes = AttributeValues(layout: object.info.layout)
                for key in keys { attributes[key] = object.attribute(named: key) ?? .null }
            }
            // A unique struct saved unchanged holds the values it was read or last saved with.
            let unchanged = object.isIdentifiedByValue && !object.hasChanges
            var toOne: [String: ManagedObjectID?] = [:]
            // The usual object has no link to save (an entity without relationships, or links unchanged and not
            // written by a unique struct): no sets of keys are made for it.
            let linked = !object.originalLinks.isEmpty || !object.identifiedRelationships.isEmpty
            // A unique struct's own foreign keys go with its whole tuple, changed or not.
            if linked {
                for key in Set(object.originalLinks.keys).union(object.identifiedRelationships)
                where object.info.relationships[key]?.isToMany == false {
                    toOne[key] = .some(linkedID(object, key))
                }
            }
            // An object whose links changed is version-checked (and its version bumped) even when no column
            // of its own row changes: two contexts changing one owner's member list must not both win.
            if !attributes.isEmpty || !toOne.isEmpty || !object.originalLinks.isEmpty {
                // A unique struct's write is not version-checked (last writer wins); one that changed nothing is
                // written only if another writer moved the row on since it was read.
                changes.updates.append(
                    ObjectChange(
                        id: object.objectID,
                        version: object.isIdentifiedByValue && !unchanged ? nil : checkedVersion(object),
                        attributes: attributes, toOne: toOne, unlessCurrent: unchanged))
            }
            // And its owned member lists when it changed (an unchanged one is only rewritten if stale, which
            // a separate statement can't tell; its columns and foreign keys are).
            guard linked else { continue }
            let forced = object.hasChanges ? object.identifiedRelationships : []
            changes.relationships += memberLists(
                object, keys: Set(object.originalLinks.keys).union(forced).sorted(), forced: forced)
        }
        for object in deleted {
            changes.deletes.append(ObjectDeletion(id: object.objectID, version: checkedVersion(object)))
        }
        changes.transactionAuthor = transactionAuthor
        changes.transactionName = transactionName
        let result = changes.isEmpty ? SaveResult() : try store.apply(changes)
        commit(result, inserted: inserted, deleted: deleted)
    }

    /// The insert of a new object, as a save sends it (its member lists apart); the store's resolution of the
    /// change set checks it (required values among them), once. `upsertKey`: the key an object's pending state no longer holds (a streamed save drops that state once
    /// a part's changes are made, and makes them again for a retry); `nil`: the object's own.
    func insertChange(_ object: ManagedObject, upsertKey: String? = nil) -> ObjectChange {
        // Every side of every relationship that has links: each store writes the sides it keeps.
        var toOne: [String: ManagedObjectID?] = [:]
        for relationship in object.info.entity.relationships where !relationship.isToMany {
            if let target = linkedID(object, relationship.name) { toOne[relationship.name] = .some(target) }
        }
        var attributes = object.attributeValues
        if object.upsertKey != nil, let names = object.upsertAttributes {
            // The upsert's update must not overwrite columns the struct does not have; a new row gets
            // the store's defaults for them.
            attributes = attributes.keeping(names)
        }
        return ObjectChange(
            id: object.objectID, attributes: attributes, toOne: toOne, upsertKey: upsertKey ?? object.upsertKey)
    }

    /// Discards every unsaved change: inserted objects leave the context, changed and deleted ones get their
    /// saved values and links back.
    public func rollback() {
        if !readVersions.isEmpty { readVersions.removeAll() }
        for object in insertedList {
            dropUnique(object)
            registry.remove(object)
            object.isDeletedFlag = true
            object.isInsertedFlag = false
        }
        let deleted = Set(deletedList)
        for object in changedList + deletedList {
            dropUnique(object)
            let originals = object.originalAttributes
            object.changeAttributes { values in
                for (key, value) in originals { values[key] = value }
            }
            for (key, links) in object.originalLinks {
                object.links[key] = links.filter { link in
                    if case .object(let linked) = link { return !linked.isDeletedFlag || deleted.contains(linked) }
                    return true
                }
            }
            object.clearPendingState()
        }
        for object in deletedList { object.isDeletedFlag = false }
        for object in changedList + deletedList { addUnique(object) }
        clearPendingLists()
    }

    /// The ID a to-one relationship links to, skipping deleted objects.
    private func linkedID(_ object: ManagedObject, _ key: String) -> ManagedObjectID? {
        guard let destination = object.info.relationships[key]?.destination else { return nil }
        for link in object.links[key] ?? [] {
            switch link {
            case .object(let linked) where !linked.isDeletedFlag: return linked.objectID
            case .object: continue
            case .key(let primaryKey): return .permanent(destination, primaryKey)
            }
        }
        return nil
    }

    /// Full member lists for the owned to-many relationships among `keys` that changed.
    private func memberLists(_ object: ManagedObject, keys: [String], forced: Set<String> = []) -> [RelationshipChange]
    {
        var result: [RelationshipChange] = []
        for key in keys where object.info.relationships[key]?.isToMany == true {
            guard let destination = object.info.relationships[key]?.destination else { continue }
            let links = object.links[key] ?? []
            if object.isInsertedFlag, links.isEmpty { continue }
            if !object.isInsertedFlag, !forced.contains(key), let original = object.originalLinks[key],
                original.isSame(as: links)
            {
                continue
            }
            let members: [ManagedObjectID] = links.compactMap { link in
                switch link {
                case .object(let linked): return linked.isDeletedFlag ? nil : linked.objectID
                case .key(let primaryKey): return .permanent(destination, primaryKey)
                }
            }
            result.append(RelationshipChange(owner: object.objectID, relationship: key, members: members))
        }
        return result
    }

    /// Takes a save's result: inserted objects get their permanent IDs (and, with `recordingSavedIDs`, their
    /// temporary ones keep finding them), every written object its new version; pending state is cleared.
    func commit(
        _ result: SaveResult, inserted: [ManagedObject], deleted: [ManagedObject], recordingSavedIDs: Bool = true
    ) {
        if recordingSavedIDs { savedIDs.reserveGrowing(savedIDs.count + inserted.count) }
        // One entity's objects at a time, on its table taken out of the registry (so that it is not copied on
        // write, and the entity is not looked up twice per object).
        for run in inserted.runs(by: \.info.name) {
            let info = inserted[run.lowerBound].info
            var objects = registry.take(info)
            // When these inserts are every object of the entity here (a bulk load, whose objects a streamed
            // save does not register until now), their permanent IDs go into a new table instead of replacing
            // each temporary one in the old.
            let rebuilt = objects.count == run.count || objects.isEmpty
            if rebuilt { objects = Dictionary(minimumCapacity: run.count) }
            for position in run {
                let object = inserted[position]
                object.isInsertedFlag = false
                let temporary = object.objectID
                // By position for a streamed save's inserts (in the order they were handed over), else by ID.
                guard let (permanent, version) = result.saved(insert: temporary, at: position) else {
                    if rebuilt { objects[temporary] = object }
                    continue
                }
                if !rebuilt { objects.removeValue(forKey: temporary) }
                if recordingSavedIDs { savedIDs[temporary] = permanent }
                object.objectID = permanent
                object.version = version
                object.isVersionFromOwnSave = true
                // The unique index already holds an inserted object (it follows every change of a unique
                // attribute); only an object that now shares its row with another one takes that one's place.
                if let previous = objects.updateValue(object, forKey: permanent), previous !== object {
                    dropUnique(previous)
                    addUnique(object)
                }
            }
            registry.put(objects, for: info)
        }
        for object in changedList {
            if let version = result.versions[object.objectID] {
                object.version = version
                object.isVersionFromOwnSave = true
            }
        }
        // Checked by this save, or written by none of its changes (the struct matched the row).
        if !readVersions.isEmpty { readVersions.removeAll() }
        for object in insertedList + changedList + deleted { object.clearPendingState() }
        for object in deleted { registry.remove(object) }
        clearPendingLists()
    }

    func dropUnique(_ object: ManagedObject) {
        for position in object.info.uniquePositions {
            let key = UniqueValue(object.info, at: position, object.attribute(at: position) ?? .null)
            if uniqueIndex[key] === object { uniqueIndex[key] = nil }
        }
    }

    func addUnique(_ object: ManagedObject) {
        guard !object.isDeletedFlag else { return }
        // A bulk save's new objects go into its part's table (see `BulkInsert`).
        let bulk = object.isInsertedFlag ? bulkInsert(of: object.info) : nil
        for position in object.info.uniquePositions {
            let value = object.attribute(at: position) ?? .null
            guard !value.isNull else { continue }
            let unique = UniqueValue(object.info, at: position, value)
            if let bulk { bulk.uniques[unique] = object } else { uniqueIndex[unique] = object }
        }
    }
}

extension ManagedObjectContext {
    /// Empties the per-entity lists of pending inserts, changes and deletes (after a save or a rollback).
    func clearPendingLists() {
        pendingInserts.removeAll()
        pendingChanges.removeAll()
        pendingDeletes.removeAll()
    }
}

extension Array {
    /// The ranges of consecutive elements with the same key, in order: a context's objects and a store's rows
    /// come grouped by entity, and each run is handled with that entity's tables taken out once.
    func runs(by key: (Element) -> String) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = startIndex
        while start < endIndex {
            let value = key(self[start])
            var end = start + 1
            while end < endIndex, key(self[end]) == value { end += 1 }
            runs.append(start..<end)
            start = end
        }
        return runs
    }
}
