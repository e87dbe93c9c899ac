extension BoxingStruct {
    /// Boxes the struct; see ``BoxingStruct/toObject(_:)``.
    ///
    /// Plain structs always insert a new object; persistent structs with an `objectID` update that object
    /// (seed issue #19: also when nested in another struct); unique structs update the object with the same
    /// identifier or insert one.
    ///
    /// - Throws: ``CVManagedStructError`` naming the entity and field at fault; nothing is written then.
    @discardableResult
    public func toObject(_ context: ManagedObjectContext?) throws -> ManagedObject {
        try BoxingSession(context: context).box(one: self)
    }

    /// Boxes the struct and links it from `object` under `key` (a to-one relationship).
    ///
    /// - Throws: ``CVManagedStructError`` when boxing fails or `key` is not a to-one relationship to this
    ///   struct's entity.
    public func box(_ object: ManagedObject, withKey key: String) throws {
        try object.setObject(toObject(object.managedObjectContext), forKey: key)
    }

    /// The structs of type `T` whose objects match a predicate, sorted; pending changes of `context` are
    /// included.
    ///
    /// ```swift
    /// let sales: [Employee] = try Employee.query(context, predicate: .key("department") == "Sales",
    ///                                            sortDescriptors: [CVPredicateKey.key("age").ascending])
    /// ```
    ///
    /// - Throws: ``CVManagedStructError`` for an unknown key or entity (before any store call), the store's
    ///   errors, and unboxing errors (`CVErrorDomain`).
    public static func query<T: UnboxingStruct>(
        _ context: ManagedObjectContext,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil
    ) throws -> [T] where T.StructureType == T {
        try query(context, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: nil)
    }

    /// The structs of type `T` matching a predicate, sorted, skipping `fetchOffset` and returning at most
    /// `fetchLimit`.
    ///
    /// - Throws: See ``query(_:predicate:sortDescriptors:)``.
    public static func query<T: UnboxingStruct>(
        _ context: ManagedObjectContext,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int?,
        fetchOffset: Int = 0
    ) throws -> [T] where T.StructureType == T {
        let request = FetchRequest(
            entityName: EntityName, predicate: predicate, sortDescriptors: sortDescriptors ?? [],
            fetchLimit: fetchLimit, fetchOffset: fetchOffset)
        return try context.fetchUnboxing(request) { try T.unbox(.object($0)) }
    }
}

extension BoxingPersistentStruct {
    /// Boxes the struct, saves the context, and stores the object's permanent ID in `objectID`; a struct that
    /// is also an `UnboxingStruct` is read back from its saved object, so every persistent struct nested in
    /// it (to-one, arrays, sets, at any depth) gets its `objectID` too.
    ///
    /// With a `nil` context the object is ephemeral and `objectID` is left alone. When boxing or saving
    /// fails, the objects this call inserted are forgotten again (a retry inserts one row, not two); other
    /// pending changes of the context are left alone.
    ///
    /// - Throws: ``CVManagedStructError/structUpdateError(message:)`` for a stale `objectID` (nothing is
    ///   inserted), boxing and save errors.
    @discardableResult
    public mutating func mutatingToObject(_ context: ManagedObjectContext?) throws -> ManagedObject {
        guard let context else { return try toObject(nil) }
        let (object, boxed) = try context.undoingOnFailure {
            let (object, boxed) = try context.keepingBoxedRoots { try toObject(context) }
            try context.save()
            return (object, boxed[ObjectIdentifier(object)])
        }
        adoptSaved(object, boxed: boxed)
        // A merge policy changed what was stored: the struct takes the stored values.
        if !context.mergedObjects.isEmpty, let unboxing = Self.self as? any UnboxingStruct.Type,
            let merged = try? unboxing.fromObject(object) as? Self
        {
            self = merged
        }
        return object
    }

    /// Takes the saved object's IDs: `objectID`, and, when the struct unboxes itself (`UnboxingStruct`), the
    /// `objectID` of every persistent struct nested in it at any depth, by reading the struct back from the
    /// object through its own `fromObject`. Saving the value again then updates rows instead of inserting
    /// them. If reading back fails, only `objectID` is set (the save itself succeeded).
    ///
    /// The struct read back is taken only if it boxes to exactly what `self` boxed (the same attribute values
    /// and the same members in the same order, IDs aside): a `fromObject` that leaves a relationship out, or
    /// a back-reference cut short where unboxing meets an object it is already reading, would otherwise hand
    /// back a value whose next save unlinks or reorders members.
    ///
    /// An object of an entity without relationships has no nested structs: only `objectID` is set, without
    /// unboxing and boxing again.
    ///
    /// `boxed`: the record this save boxed the struct from, when the boxing kept it (the struct is then not
    /// boxed again to compare).
    mutating func adoptSaved(_ object: ManagedObject, boxed: BoxRecord? = nil) {
        guard !object.info.entity.relationships.isEmpty, let context = object.managedObjectContext,
            let unboxing = Self.self as? any UnboxingStruct.Type,
            let saved = try? unboxing.fromObject(object) as? Self, saved.objectID == object.objectID
        else {
            objectID = object.objectID.read(at: object.version)
            return
        }
        let builder = RecordBuilder(entity: { try context.index.entity($0) }, layouts: context.layouts)
        guard let mine = boxed ?? (try? builder.record(for: self)), let theirs = try? builder.record(for: saved),
            mine.hasSameContent(as: theirs)
        else {
            objectID = object.objectID.read(at: object.version)
            return
        }
        self = saved
    }

    /// Deletes the stored row, saves, and sets `objectID` to `nil`; `false` without a context or an ID.
    ///
    /// - Throws: ``CVManagedStructError/structDeleteError(message:)`` wrapping the reason.
    @discardableResult
    public mutating func delete(_ context: ManagedObjectContext?) throws -> Bool {
        guard let context, let id = objectID else { return false }
        do {
            try context.undoingOnFailure {
                let fetchedNow = context.registeredObject(for: id) == nil
                let object = try context.existingObject(with: id)
                // Checked against the version the struct was read at, as an update is.
                context.takeReadVersion(of: id, for: object, fetchedNow: fetchedNow)
                try context.delete(object)
                try context.save()
            }
        } catch let cancelled as CancellationError {
            // An async call that was cancelled says so; nothing was deleted.
            throw cancelled
        } catch {
            throw CVManagedStructError.structDeleteError(message: "could not delete \(id): \(error)")
        }
        objectID = nil
        return true
    }

    /// Boxes and saves the struct (``mutatingToObject(_:)``); call it from an overridden ``save(_:)``.
    ///
    /// - Throws: What ``mutatingToObject(_:)`` throws.
    public mutating func defaultSave(_ context: ManagedObjectContext) throws {
        try mutatingToObject(context)
    }

    /// Saves the struct with ``defaultSave(_:)``.
    ///
    /// - Throws: What ``mutatingToObject(_:)`` throws.
    public mutating func save(_ context: ManagedObjectContext) throws {
        try defaultSave(context)
    }
}

extension BoxingUniqueStruct {
    /// The typed predicate `IdentifierName == IdentifierValue()`.
    ///
    /// - Throws: Never today; kept throwing for the seed's signature.
    public func identifierPredicate() throws -> CVPredicate {
        IdentifierValue().predicate(Self.IdentifierName)
    }

    /// Deletes the object with this struct's identifier (registered, else stored) and saves.
    ///
    /// - Throws: ``CVManagedStructError/structDeleteError(message:)`` when there is no such object or the
    ///   save fails.
    public func delete(_ context: ManagedObjectContext?) throws {
        guard let context else { return }
        do {
            let request = FetchRequest(entityName: Self.EntityName, predicate: try identifierPredicate(), fetchLimit: 1)
            guard let object = try context.fetch(request).first else {
                throw CVManagedStructError.objectNotFound(.temporary(Self.EntityName))
            }
            try context.undoingOnFailure {
                try context.delete(object)
                try context.save()
            }
        } catch let cancelled as CancellationError {
            throw cancelled
        } catch {
            throw CVManagedStructError.structDeleteError(
                message: "could not delete \(Self.EntityName) with \(Self.IdentifierName) = "
                    + "\(IdentifierValue().attributeValue.typeDescription) value: \(error)")
        }
    }

    /// Boxes the struct (``BoxingStruct/toObject(_:)``, which a type may implement itself) and saves.
    ///
    /// As in `saveAll`, a struct of a flat entity (no relationships) that has every attribute, and whose
    /// identifier is not registered in the context, is not looked up first: the save's `INSERT ... ON CONFLICT
    /// ... DO UPDATE` inserts or updates its row, so the save is one round trip.
    ///
    /// - Throws: Boxing and save errors.
    public func defaultSave(_ context: ManagedObjectContext) throws {
        try context.undoingOnFailure {
            context.typeBoxedForSave = ObjectIdentifier(Self.self)
            defer { context.typeBoxedForSave = nil }
            try toObject(context)
            try context.save()
        }
    }

    /// Saves the struct with ``defaultSave(_:)``.
    ///
    /// - Throws: Boxing and save errors.
    public func save(_ context: ManagedObjectContext) throws {
        try defaultSave(context)
    }
}

extension Array where Element: BoxingStruct {
    /// Boxes every element in one batch: one object per element, in order.
    ///
    /// Identities are resolved together: one store call per batch of missing `objectID`s and one per batch
    /// of unique identifiers not registered yet (then a dictionary lookup per element). Elements with the
    /// same unique identifier share one object; the last one's values win.
    ///
    /// - Throws: ``CVManagedStructError``; nothing is written then.
    @discardableResult
    public func toObjects(_ context: ManagedObjectContext?) throws -> [ManagedObject] {
        try BoxingSession(context: context).box(self)
    }
}

extension Array where Element: BoxingUniqueStruct {
    /// Boxes every element (``toObjects(_:)``) and saves once.
    ///
    /// Elements of a flat entity (no relationships) whose struct has every attribute, and whose identifier is
    /// not registered in the context, are not looked up first: the save's `INSERT ... ON CONFLICT ... DO
    /// UPDATE` inserts or updates them in the one statement, with the same result.
    ///
    /// A bulk load (more than 2,000 such elements, into a context with no other unsaved change and no object
    /// of the entity) is streamed: the elements are boxed in parts of 2,000 (the first of 500) in identifier
    /// order, and the store writes each part while the next is boxed (`PostgresStore` pipelines them). It is still one
    /// transaction with the same result: everything or nothing, the last of equal identifiers winning.
    ///
    /// - Throws: Boxing and save errors.
    public func saveAll(_ context: ManagedObjectContext) throws {
        try context.undoingOnFailure {
            // A bulk load of new structs: boxed in parts that the store writes while the next is boxed.
            if try context.saveStreamed(self) { return }
            _ = try BoxingSession(context: context, blindUpserts: true).box(self)
            try context.save()
        }
    }
}

extension Array where Element: BoxingPersistentStruct {
    /// Boxes every element (``toObjects(_:)``), saves once, and writes each element's `objectID` back, and
    /// those of the persistent structs nested in it (see ``BoxingPersistentStruct/mutatingToObject(_:)``).
    ///
    /// Overridden `save(_:)` methods are not called; save nested collections first if you rely on them.
    ///
    /// - Throws: Boxing and save errors; `objectID`s are left alone then.
    public mutating func saveAll(_ context: ManagedObjectContext) throws {
        let (objects, boxed) = try context.undoingOnFailure {
            let (objects, boxed) = try context.keepingBoxedRoots { try toObjects(context) }
            try context.save()
            return (objects, boxed)
        }
        for (position, object) in zip(indices, objects) {
            self[position].adoptSaved(object, boxed: boxed[ObjectIdentifier(object)])
        }
    }
}

extension ManagedObjectContext {
    /// Runs `body` (a boxing) keeping the record each boxed root was made from, by its object; an enclosing
    /// call's records are kept apart and restored.
    func keepingBoxedRoots<T>(_ body: () throws -> T) rethrows -> (T, [ObjectIdentifier: BoxRecord]) {
        let enclosing = boxedRoots
        boxedRoots = [:]
        defer { boxedRoots = enclosing }
        let value = try body()
        return (value, boxedRoots ?? [:])
    }
}
