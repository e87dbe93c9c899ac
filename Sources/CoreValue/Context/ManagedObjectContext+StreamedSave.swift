extension ManagedObjectContext {
    /// The structs in one part of a streamed `saveAll` (see ``saveStreamed(_:)``).
    static let streamedPartSize = 2_000
    /// The structs in the first part: fewer, so that the store starts writing sooner (the server waits for
    /// the first part, and only for it; later parts are boxed while it writes the one before).
    static let firstStreamedPartSize = 500

    /// Saves unique structs as a bulk load whose boxing and writing overlap, when it may: boxes them in
    /// parts of about ``streamedPartSize`` (the first of ``firstStreamedPartSize``), in identifier order,
    /// and hands each part to the store as soon as it is boxed (`Store.apply(upserts:streaming:)`), so that
    /// the store writes one part while the next is boxed. One transaction, as `saveAll` always is: on failure nothing is written, and the caller's
    /// ``undoingOnFailure(_:)`` forgets the objects.
    ///
    /// It applies when the result is what boxing everything and then saving would give: more structs than one
    /// part; no other unsaved change in the context (a save writes those too) and no registered object of
    /// the entity (the structs are all new to the context, so each is an upsert, never an update); a flat
    /// entity and a struct with every attribute (upserted without a lookup, as `saveAll` does anyway); and
    /// an identifier type that sorts here as the server sorts it (integers, strings, UUIDs), so that two
    /// bulk loads of overlapping rows lock them in one order and cannot deadlock each other.
    ///
    /// - Returns: `false`, having done nothing, when it does not apply.
    /// - Throws: Boxing and save errors.
    func saveStreamed<T: BoxingUniqueStruct>(_ structs: [T]) throws -> Bool {
        guard structs.count > Self.streamedPartSize, !hasChanges, let first = structs.first else { return false }
        let info = try index.entity(T.EntityName)
        // One unique attribute, the identifier: the only one a part's boxing looks objects up by.
        guard info.entity.relationships.isEmpty, registry[info]?.isEmpty ?? true,
            info.uniqueAttributes.count == 1, let attribute = info.attributes[T.IdentifierName], attribute.isUnique,
            ValueOrder.matchesServerOrder(attribute.type)
        else { return false }
        // Every attribute (see `BoxingSession.canUpsertBlindly`), told by the type's plan: the first struct is
        // not boxed here and again in its part.
        guard try RecordBuilder(entity: { try self.index.entity($0) }, layouts: layouts).setsEveryAttribute(first)
        else { return false }
        // The identifiers as boxing converts them; one that does not convert takes the usual path, which
        // reports it.
        var keys: [AttributeValue] = []
        keys.reserveCapacity(structs.count)
        for value in structs {
            guard let key = value.IdentifierValue().attributeValue.converted(to: attribute.type), !key.isNull else {
                return false
            }
            keys.append(key)
        }
        // Identifier order (input order among equal identifiers, so that the last one's values still win).
        let order = keys.indices.sorted { left, right in
            let comparison = ValueOrder.compare(keys[left], keys[right]) ?? 0
            return comparison != 0 ? comparison < 0 : left < right
        }
        var inserted: [ManagedObject] = []
        inserted.reserveCapacity(structs.count)
        // The objects join the registry and the unique index when the save commits (see `BulkInsert`).
        let bulk = BulkInsert(entity: info.number)
        bulkInsert = bulk
        defer { bulkInsert = nil }
        // Where each part ends in `inserted`, once boxed: a store that retries calls this closure again, and
        // the same parts are handed over again from their objects, without boxing twice.
        var partEnds: [Int] = []
        var boxed = false
        // A part's inserts, each upserted by the identifier. What an object's pending state held for the save
        // (that key; no other columns, as the struct has every attribute) is in its change then, and a new
        // object has no original values to restore: the state is dropped here rather than at the commit, so
        // that 100,000 objects do not hold 100,000 of them.
        func changes(of objects: ArraySlice<ManagedObject>) -> ChangeSet {
            var part = ChangeSet()
            part.transactionAuthor = transactionAuthor
            part.transactionName = transactionName
            part.inserts.reserveCapacity(objects.count)
            for object in objects {
                part.inserts.append(insertChange(object, upsertKey: attribute.name))
                object.pending = nil
            }
            return part
        }
        // The parts come in identifier order: the first identifier in that order is the least.
        let upserts = StreamedUpserts(
            entityName: info.name, key: attribute.name, lowest: keys[order[0]], count: structs.count)
        let result = try refined.apply(upserts: upserts) { send in
            if boxed {
                var start = 0
                for end in partEnds {
                    try send(changes(of: inserted[start..<end]))
                    start = end
                }
                return
            }
            var start = 0
            while start < order.count {
                // Equal identifiers stay in one part: they share one object.
                let size = partEnds.isEmpty ? Self.firstStreamedPartSize : Self.streamedPartSize
                var end = min(start + size, order.count)
                while end < order.count, ValueOrder.compare(keys[order[end - 1]], keys[order[end]]) == 0 { end += 1 }
                let mark = insertedList.count
                // Equal identifiers share one part: a part looks up only its own objects.
                bulk.uniques.removeAll(keepingCapacity: true)
                _ = try BoxingSession(context: self, blindUpserts: true).box(order[start..<end].map { structs[$0] })
                let new = insertedList[mark...]
                let part = changes(of: new)
                inserted += new
                partEnds.append(inserted.count)
                try send(part)
                start = end
            }
            boxed = true
        }
        // The objects were made in this call and their temporary IDs never left it: no struct or caller can
        // hold one, so none needs to find its object by it later (``savedIDs``, 21 MB for 100,000 objects).
        bulkInsert = nil
        commit(result, inserted: inserted, deleted: [], recordingSavedIDs: false)
        indexLater(inserted)
        return true
    }
}
