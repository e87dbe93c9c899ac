extension ManagedObjectContext {
    /// Deletes an object; the deletion is written by the next ``save()-6ko1p``.
    ///
    /// Delete rules apply now: objects reached through `cascade` relationships are deleted too, a `deny`
    /// relationship that still has objects refuses the delete, and every remaining related object forgets the
    /// deleted ones (`nullify`). Related objects are loaded first, so a failure changes nothing. Deleting an
    /// inserted object simply forgets it.
    ///
    /// - Throws: ``CVManagedStructError/constraintViolation(entity:key:message:)`` for a `deny` rule,
    ///   ``CVManagedStructError/invalidObject(message:)`` for an object of another context, or the store's
    ///   error when loading related objects fails.
    public func delete(_ object: ManagedObject) throws {
        try delete([object])
    }

    /// Deletes several objects as one: cascades, deny checks and unlinking are computed over all of them
    /// together (one batched unlink, and nothing changes if any deny rule refuses).
    func delete(_ roots: [ManagedObject]) throws {
        for object in roots where object.managedObjectContext !== self {
            throw CVManagedStructError.invalidObject(message: "\(object.objectID) belongs to another context")
        }
        var doomed: [ManagedObject] = []
        var doomedIDs = Set<ObjectIdentifier>()
        var stack = roots.filter { !$0.isDeletedFlag }
        guard !stack.isEmpty else { return }
        while let next = stack.popLast() {
            guard doomedIDs.insert(ObjectIdentifier(next)).inserted else { continue }
            doomed.append(next)
            for relationship in next.info.entity.relationships where relationship.deleteRule == .cascade {
                stack += try resolve(next, relationship.name)
            }
        }
        var related: [(ManagedObject, String, [ManagedObject])] = []
        for victim in doomed {
            // No action: the destinations are neither loaded nor unlinked.
            for relationship in victim.info.entity.relationships where relationship.deleteRule != .noAction {
                let members = try resolve(victim, relationship.name)
                let survivors = members.filter { !doomedIDs.contains(ObjectIdentifier($0)) }
                if relationship.deleteRule == .deny, !survivors.isEmpty {
                    throw CVManagedStructError.constraintViolation(
                        entity: victim.info.name, key: relationship.name,
                        message: "delete rule deny: \(survivors.count) related object(s) remain")
                }
                if let inverse = victim.info.inverses[relationship.name] {
                    related.append((victim, inverse.name, survivors))
                }
            }
        }
        var unlinked: [ObjectIdentifier: (ManagedObject, [String: [ManagedObject]])] = [:]
        var unlinkOrder: [ManagedObject] = []
        for (victim, inverseKey, survivors) in related {
            for survivor in survivors {
                let identity = ObjectIdentifier(survivor)
                if unlinked[identity] == nil {
                    unlinked[identity] = (survivor, [:])
                    unlinkOrder.append(survivor)
                }
                unlinked[identity]?.1[inverseKey, default: []].append(victim)
            }
        }
        for survivor in unlinkOrder {
            for (key, victims) in unlinked[ObjectIdentifier(survivor)]?.1 ?? [:] {
                survivor.removeLinks(to: victims, key)
            }
        }
        undoLog?.victims += doomed
        for victim in doomed {
            dropUnique(victim)
            victim.isDeletedFlag = true
            if victim.isInsertedFlag {
                registry.remove(victim)
            } else {
                pendingDeletes.append(victim)
            }
        }
    }
}
