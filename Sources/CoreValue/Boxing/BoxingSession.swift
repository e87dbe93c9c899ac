/// Boxes a batch of structs into objects: reflect, resolve identities in batches, then write.
struct BoxingSession {
    let context: ManagedObjectContext?
    /// Whether unique structs that are not registered in the context may skip the store lookup and go
    /// straight to the save's `INSERT ... ON CONFLICT ... DO UPDATE` (see ``canUpsertBlindly(_:)``). Only for
    /// a boxing that is saved at once (`saveAll`, a unique struct's `save`): until the save, such an object is
    /// a pending insert even when its row exists, which a fetch in between would show twice.
    var blindUpserts = false

    init(context: ManagedObjectContext?, blindUpserts: Bool = false) {
        self.context = context
        self.blindUpserts = blindUpserts
    }

    /// One object per value, in order; values with the same unique identifier share one object, and the
    /// last one's values win.
    ///
    /// - Throws: ``CVManagedStructError`` from reflection or identity resolution; either way no object has
    ///   been written.
    func box<T: BoxingStruct>(_ values: [T]) throws -> [ManagedObject] {
        let builder = try recordBuilder(T.self, isEmpty: values.isEmpty)
        // With the type known: no existential per struct (see `RecordBuilder.record(typed:depth:)`). A loop
        // over the array, not `map`: this code is not specialized for the caller's type, and `Collection.map`
        // reached each element through the protocol's witnesses.
        var roots: [BoxRecord] = []
        roots.reserveCapacity(values.count)
        for index in values.indices { roots.append(try builder.record(typed: values[index], depth: 0)) }
        return try box(roots, of: ObjectIdentifier(T.self))
    }

    /// `box(_:)` for one struct (`toObject`): no array of the caller's type is made (its generic
    /// metadata looked up at run time, its storage allocated) for the one value.
    func box<T: BoxingStruct>(one value: T) throws -> ManagedObject {
        let root = try recordBuilder(T.self, isEmpty: false).record(typed: value, depth: 0)
        let objects = try box([root], of: ObjectIdentifier(T.self))
        guard let object = objects.first else {
            throw CVManagedStructError.structConversionError(message: "boxing \(T.self) produced no object")
        }
        return object
    }

    /// What makes the records of `type`'s structs.
    private func recordBuilder<T: BoxingStruct>(_ type: T.Type, isEmpty: Bool) throws -> RecordBuilder {
        // Without a context, the entities come from the struct types themselves (no process-wide registry).
        let index = try context?.index ?? DerivedModel.index(for: isEmpty ? [] : [T.self])
        // Without a context, a cache of this call's own, so each struct type is still resolved once.
        return RecordBuilder(entity: { try index.entity($0) }, layouts: context?.layouts ?? LayoutCache())
    }

    /// Phases two and three for the records of structs of one type: identities resolved, objects written.
    private func box(_ roots: [BoxRecord], of type: ObjectIdentifier) throws -> [ManagedObject] {
        if let context {
            // A unique struct's own `save` boxing it (not whatever else its `toObject` boxes first).
            let saved = context.typeBoxedForSave == type
            if saved { context.typeBoxedForSave = nil }
            try resolve(roots, in: context, blindly: blindUpserts || saved)
            // Room for the batch in the context's tables at once, rather than growing them by rehashing.
            let new = roots.filter { $0.object == nil }
            if let info = new.first?.info { context.reserveCapacity(new.count, of: info) }
        }
        let objects = try roots.map { try write($0) }
        // Only what adopting saved IDs compares: structs of entities with relationships (see `adoptSaved`).
        if let context, context.boxedRoots != nil {
            for (record, object) in zip(roots, objects) where !record.info.entity.relationships.isEmpty {
                context.boxedRoots?[ObjectIdentifier(object)] = record
            }
        }
        return objects
    }

    /// Phase two: finds the existing object of every record that has one, with one store call per kind.
    private func resolve(_ roots: [BoxRecord], in context: ManagedObjectContext, blindly: Bool) throws {
        let records = roots.flatMap(\.tree)
        var wantedIDs: [ManagedObjectID] = []
        var seenIDs = Set<ManagedObjectID>()
        var wantedValues: [String: [String: [AttributeValue]]] = [:]
        var seenValues = Set<UniqueValue>()
        for record in records {
            for (_, targets) in record.relationships {
                for case .object(let object) in targets
                where object.managedObjectContext !== context || object.isDeletedFlag {
                    throw CVManagedStructError.invalidObject(
                        message: "\(object.objectID) is deleted or belongs to another context than the one boxing into")
                }
            }
            switch record.identity {
            case .new: continue
            case .objectID(let temporaryOrPermanent):
                let id = context.permanentID(for: temporaryOrPermanent)
                if context.registeredObject(for: id) == nil, !id.isTemporary, seenIDs.insert(id).inserted {
                    wantedIDs.append(id)
                }
            case .unique(let key, let value):
                if blindly, Self.canUpsertBlindly(record) { continue }
                guard let unique = UniqueValue(record.info, key, value) else {
                    throw CVManagedStructError.unknownKey(entity: record.info.name, key: key)
                }
                if let object = context.uniqueIndex[unique] {
                    // Kept unless the fetches below register rows, which can move a registered object's
                    // unique value (phase two then looks every record up again). A bulk save's objects are
                    // in its own table, which phase two reads.
                    if context.bulkInsert(of: record.info) == nil { record.object = object }
                } else if seenValues.insert(unique).inserted {
                    wantedValues[record.info.name, default: [:]][key, default: []].append(value)
                }
            }
        }
        let fetches = !wantedIDs.isEmpty || !wantedValues.isEmpty
        if !wantedIDs.isEmpty { try context.fetchAndRegister(wantedIDs) }
        for (entityName, byKey) in wantedValues.sorted(by: { $0.key < $1.key }) {
            for (key, values) in byKey.sorted(by: { $0.key < $1.key }) {
                var start = 0
                while start < values.count {
                    let batch = Array(values[start..<min(start + ManagedObjectContext.batchSize, values.count)])
                    for snapshot in try context.refined.fetch(entityName: entityName, key: key, values: batch)
                    where snapshot.id.entityName == entityName {
                        _ = try context.register(snapshot)
                    }
                    start += ManagedObjectContext.batchSize
                }
            }
        }
        var prefetch: [(ManagedObject, [String])] = []
        for record in records {
            switch record.identity {
            case .new: break
            case .objectID(let id):
                guard let object = context.registeredObject(for: id), !object.isDeletedFlag else {
                    throw CVManagedStructError.structUpdateError(
                        message: "no stored object of entity '\(record.info.name)' has objectID \(id); it was "
                            + "deleted, or saved in another store")
                }
                // The save checks the version the struct was read at, unless this context's reading vouches for
                // it: a struct read before another writer's save conflicts instead of overwriting it.
                context.takeReadVersion(of: id, for: object, fetchedNow: seenIDs.contains(id))
                record.object = object
            case .unique(let key, let value):
                if fetches || record.object == nil { record.object = context.uniqueObject(record.info, key, value) }
            }
            if let object = record.object { prefetch.append((object, record.relationships.map(\.0))) }
            for (name, targets) in record.relationships {
                guard let inverse = record.info.inverses[name], !inverse.isToMany else { continue }
                for target in targets {
                    switch target {
                    case .object(let object): prefetch.append((object, [inverse.name]))
                    case .record(let child):
                        if let object = child.object ?? existing(child, context) {
                            prefetch.append((object, [inverse.name]))
                        }
                    }
                }
            }
        }
        try context.prefetchLinks(of: prefetch)
    }

    /// Whether a unique struct's row needs no lookup before its upsert: the struct has every attribute of its
    /// entity, so the upsert writes the whole row and the saved object knows all of it, and the entity has no
    /// relationships, so there are no stored links the object would have to know (and no inverses to keep).
    static func canUpsertBlindly(_ record: BoxRecord) -> Bool {
        record.attributeNames == nil && record.info.entity.relationships.isEmpty
    }

    private func existing(_ record: BoxRecord, _ context: ManagedObjectContext) -> ManagedObject? {
        switch record.identity {
        case .new: return nil
        case .objectID(let id): return context.registeredObject(for: id)
        case .unique(let key, let value): return context.uniqueObject(record.info, key, value)
        }
    }

    /// Phase three: writes a record (and its children first) into its object.
    private func write(_ record: BoxRecord) throws -> ManagedObject {
        let object = try self.object(for: record)
        // Set only now that reflection and resolution succeeded: a failed boxing leaves the object checked.
        if case .unique = record.identity {
            // An object this boxing inserted needs no record: undoing forgets it.
            if !record.isNew { context?.undoLog?.recordIdentifiedByValue(object) }
            let wasIdentified = object.isIdentifiedByValue
            object.isIdentifiedByValue = true
            if !object.isInsertedFlag {
                // A stored row written by a unique struct gets the whole struct, changed columns or not: sending
                // only what changed since this context read it would mix in another writer's columns. Several
                // struct types writing one row send what any of them has (`nil`: every attribute).
                switch (wasIdentified, object.identifiedAttributes, record.attributeNames) {
                case (false, _, let names): object.identifiedAttributes = names
                case (true, let current?, let names?): object.identifiedAttributes = current.union(names)
                default: object.identifiedAttributes = nil
                }
                // Only a record with relationships touches them: the pending state is made on first write.
                if !record.relationships.isEmpty {
                    object.identifiedRelationships.formUnion(record.relationships.map(\.0))
                }
                context?.markChanged(object)
            }
        }
        if object.upsertKey != nil, let current = object.upsertAttributes {
            // An object shared by records of several struct types upserts what any of them set.
            if let names = record.attributeNames {
                if !current.isSuperset(of: names) { object.upsertAttributes = current.union(names) }
            } else {
                object.upsertAttributes = nil
            }
        }
        if record.attributesWritten {
            // Stored with the object's identifier when it was made (see `object(for:)`).
        } else if record.isNew, let complete = record.completeValues(identifiedAt: nil, .null) {
            // A new object without unique attributes whose record sets every attribute: one array, not a
            // write per value into a copy of the defaults.
            object.replaceAttributes(with: complete)
        } else {
            try writeAttributes(of: record, into: object)
        }
        for (key, targets) in record.relationships {
            let objects = try targets.map { target -> ManagedObject in
                switch target {
                case .object(let object): return object
                case .record(let child): return try write(child)
                }
            }
            try object.setRelated(objects, forKey: key)
        }
        return object
    }

    /// Writes a record's attributes: original values tracked, unique index entries moved.
    private func writeAttributes(of record: BoxRecord, into object: ManagedObject) throws {
        guard record.isNew else {
            for (position, value) in record.attributes { try object.assign(value, at: position) }
            return
        }
        // An object this boxing inserted has no original values to track or undo: its values are set in one
        // change, and only a unique one, which has an index entry to move, one by one.
        let isUnique = record.info.isUnique
        object.changeAttributes { values in
            for (position, value) in record.attributes where !isUnique[position] { values[at: position] = value }
        }
        for (position, value) in record.attributes where isUnique[position] { try object.assign(value, at: position) }
    }

    private func object(for record: BoxRecord) throws -> ManagedObject {
        if let object = record.object { return object }
        // A struct of an abstract entity reads its subentities' objects; a new one has no entity to be.
        if record.info.entity.isAbstract { throw CVManagedStructError.abstractEntity(record.info.name) }
        let object: ManagedObject
        if let context {
            if case .unique(let key, let value) = record.identity {
                if let shared = context.uniqueObject(record.info, key, value) {
                    object = shared
                } else {
                    let position = try record.info.uniquePosition(key)
                    object = context.insertObject(record.info)
                    record.isNew = true
                    object.upsertKey = key
                    object.upsertAttributes = record.attributeNames
                    if object.upsertAttributes?.contains(key) == false { object.upsertAttributes?.insert(key) }
                    // A new object has no original value to record or undo (undoing forgets it): set the
                    // identifier directly (with every other value at once where the record has them all),
                    // then index the object as `insert(entityName:)` does.
                    if let complete = record.completeValues(identifiedAt: position, value) {
                        object.replaceAttributes(with: complete)
                        record.attributesWritten = true
                    } else {
                        object.setAttribute(value, at: position)
                    }
                    context.addUnique(object)
                }
            } else {
                object = try context.insert(entityName: record.info.name)
                record.isNew = true
            }
        } else {
            object = ManagedObject(info: record.info, objectID: .temporary(record.info.name), handle: nil)
            record.isNew = true
        }
        record.object = object
        return object
    }
}
