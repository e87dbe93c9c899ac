/// A store's own rule for the values of one attribute type, run once per value as a change set is resolved
/// (``ChangeSet/resolved(against:rules:)``): it refuses a value the store cannot keep (PostgreSQL: text with a
/// NUL character) or returns it as the store keeps it (``MemoryStore``: a date to the microsecond), `nil` when
/// the value stays as it is.
package struct ValueRule: Sendable {
    /// The rule's signature: a non-null value of the rule's type, the entity and the value's position in the
    /// entity's layout (names are looked up only to say what was wrong).
    package typealias Apply =
        @Sendable (_ value: AttributeValue, _ entity: EntityIndex, _ position: Int) throws ->
        AttributeValue?
    /// The attribute type whose values the rule sees.
    package let type: AttributeType
    package let apply: Apply

    package init(_ type: AttributeType, _ apply: @escaping Apply) {
        self.type = type
        self.apply = apply
    }
}

/// A change set checked against the model once, by ``ChangeSet/resolved(against:rules:)``, for a store's plan
/// to take as proven: every entity, key and relationship is known; every insert's and update's attributes are
/// in its entity's layout, of their attributes' types, with the store's ``ValueRule``s applied; required
/// values are present; upsert keys are unique attributes with a value; links have the right kind and
/// destination. What takes it checks none of that again.
package struct ResolvedChangeSet: Sendable {
    /// The changes, their attributes resolved.
    package fileprivate(set) var changes: ChangeSet
    /// The entity of each insert, in order.
    package fileprivate(set) var insertEntities: [EntityIndex] = []
    /// The position of each insert's upsert key in its entity's layout (`nil`: a plain insert), in order.
    package fileprivate(set) var upsertPositions: [Int?] = []
    /// The entity of each update, in order.
    package fileprivate(set) var updateEntities: [EntityIndex] = []
    /// The entity of each delete, in order.
    package fileprivate(set) var deleteEntities: [EntityIndex] = []
    /// The owner's entity and the relationship of each member list, in order.
    package fileprivate(set) var links: [(entity: EntityIndex, relationship: Relationship)] = []

    fileprivate init(_ changes: ChangeSet) { self.changes = changes }
}

extension ChangeSet {
    /// Checks everything about a change set that needs no stored data, with the errors every store gives,
    /// and resolves it for the store's plan: the one place where a save's changes are checked.
    ///
    /// Both `MemoryStore` and `PostgresStore` run this first, so a malformed change set from a direct
    /// ``Store/apply(_:)`` call fails the same way on either, before anything is written: unknown entities
    /// and keys, values that do not convert without loss, required attributes set to null, an upsert key that
    /// is not a unique attribute or has no value, a to-one written as a member list or a to-many as a single
    /// link, destinations of the wrong entity, and a member listed twice. `rules` are the store's own.
    ///
    /// - Throws: ``CVManagedStructError``: `unknownEntity`, `abstractEntity` (an insert of an abstract
    ///   entity), `unknownKey`, `typeMismatch`, `missingValue`, `invalidObject` (an insert of a stored ID, an
    ///   update or delete of a never-saved one) or `constraintViolation`; what a rule throws.
    package func resolved(against index: ModelIndex, rules: [ValueRule] = []) throws -> ResolvedChangeSet {
        var resolved = ResolvedChangeSet(self)
        var attributes = AttributeResolver(rules: rules)
        resolved.insertEntities.reserveCapacity(inserts.count)
        resolved.upsertPositions.reserveCapacity(inserts.count)
        // The usual run of changes of one entity, with one upsert key: each looked up by name once per run.
        var checkedUpsertKey: (name: String, position: Int)?
        for (offset, change) in inserts.enumerated() {
            let entity = try attributes.entity(change.id.entityName, in: index)
            if attributes.changedEntity { checkedUpsertKey = nil }
            guard change.id.isTemporary else {
                throw CVManagedStructError.invalidObject(message: "insert of \(change.id), which is already stored")
            }
            guard !entity.entity.isAbstract else { throw CVManagedStructError.abstractEntity(entity.name) }
            let values = try attributes.resolve(change.attributes, entity)
            if let values { resolved.changes.inserts[offset].attributes = values }
            let given = values ?? change.attributes
            try Self.checkComplete(given, entity)
            var upsertPosition: Int?
            if let upsertKey = change.upsertKey {
                if let known = checkedUpsertKey, known.name == upsertKey {
                    upsertPosition = known.position
                } else {
                    guard entity.attributes[upsertKey]?.isUnique == true,
                        let position = entity.layout.position(of: upsertKey)
                    else {
                        throw CVManagedStructError.constraintViolation(
                            entity: entity.name, key: upsertKey, message: "upsert key is not a unique attribute")
                    }
                    checkedUpsertKey = (upsertKey, position)
                    upsertPosition = position
                }
                if let position = upsertPosition, given[at: position]?.isNull ?? true {
                    throw CVManagedStructError.missingValue(entity: entity.name, key: upsertKey)
                }
            }
            try Self.checkToOne(change.toOne, entity)
            resolved.insertEntities.append(entity)
            resolved.upsertPositions.append(upsertPosition)
        }
        resolved.updateEntities.reserveCapacity(updates.count)
        for (offset, change) in updates.enumerated() {
            let entity = try attributes.entity(change.id.entityName, in: index)
            guard !change.id.isTemporary else {
                throw CVManagedStructError.invalidObject(message: "update of \(change.id), which was never saved")
            }
            if change.unlessCurrent, change.version == nil {
                throw CVManagedStructError.invalidObject(
                    message: "update of \(change.id) is to be written unless current, but names no version")
            }
            if let values = try attributes.resolve(change.attributes, entity) {
                resolved.changes.updates[offset].attributes = values
            }
            try Self.checkToOne(change.toOne, entity)
            resolved.updateEntities.append(entity)
        }
        for deletion in deletes {
            resolved.deleteEntities.append(try attributes.entity(deletion.id.entityName, in: index))
            guard !deletion.id.isTemporary else {
                throw CVManagedStructError.invalidObject(message: "delete of \(deletion.id), which was never saved")
            }
        }
        for change in relationships {
            let entity = try attributes.entity(change.owner.entityName, in: index)
            let relationship = try entity.relationship(change.relationship)
            guard relationship.isToMany else {
                throw CVManagedStructError.constraintViolation(
                    entity: entity.name, key: relationship.name, message: "not a to-many relationship")
            }
            var seen = Set<ManagedObjectID>(minimumCapacity: change.members.count)
            for member in change.members {
                try Self.checkDestination(member, of: relationship, in: entity)
                guard seen.insert(member).inserted else {
                    throw CVManagedStructError.constraintViolation(
                        entity: entity.name, key: relationship.name, message: "\(member) is listed twice")
                }
            }
            resolved.links.append((entity, relationship))
        }
        return resolved
    }

    /// Checks that a new row has a value for every required attribute without a default. An upsert too: the
    /// row may turn out to exist, but PostgreSQL checks `NOT NULL` on the proposed row before it looks for a
    /// conflict, so both stores refuse it alike, here, once.
    private static func checkComplete(_ values: AttributeValues, _ entity: EntityIndex) throws {
        let isOptional = entity.isOptional
        let declared = entity.entity.attributes
        for position in isOptional.indices where !isOptional[position] && declared[position].defaultValue == nil {
            if values[at: position] == nil {
                throw CVManagedStructError.missingValue(entity: entity.name, key: declared[position].name)
            }
        }
    }

    private static func checkToOne(_ links: [String: ManagedObjectID?], _ entity: EntityIndex) throws {
        for (name, target) in links {
            let relationship = try entity.relationship(name)
            guard !relationship.isToMany else {
                throw CVManagedStructError.constraintViolation(
                    entity: entity.name, key: name, message: "not a to-one relationship")
            }
            if let target { try checkDestination(target, of: relationship, in: entity) }
        }
    }

    private static func checkDestination(_ id: ManagedObjectID, of relationship: Relationship, in entity: EntityIndex)
        throws
    {
        // A destination with subentities holds their objects too.
        guard id.entityName == relationship.destination || entity.isDestination(relationship, kindOf: id.entityName)
        else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: relationship.name, expected: relationship.destination,
                found: id.entityName)
        }
    }
}

/// Resolves one change's attributes at a time, keeping what it looked up for the previous change's entity.
private struct AttributeResolver {
    let rules: [ValueRule]
    private var current: EntityIndex?
    /// For `current`, the index in `rules` of the rule at each position of its layout (-1: none); empty with
    /// no rules.
    private var ruleAt: [Int] = []
    /// Whether the last ``entity(_:in:)`` found another entity than the call before.
    private(set) var changedEntity = false

    init(rules: [ValueRule]) { self.rules = rules }

    mutating func entity(_ name: String, in index: ModelIndex) throws -> EntityIndex {
        if let current, current.name == name {
            changedEntity = false
            return current
        }
        let found = try index.entity(name)
        current = found
        changedEntity = true
        ruleAt = rules.isEmpty ? [] : found.types.map { type in rules.firstIndex { $0.type == type } ?? -1 }
        return found
    }

    /// The attributes in the entity's layout, of its attributes' types, the rules applied; `nil` when that is
    /// what was given (the usual case for a context's change set: nothing is copied).
    ///
    /// - Throws: `unknownKey`, `typeMismatch` for a value that does not convert without loss, `missingValue`
    ///   for null in a required attribute; what a rule throws.
    func resolve(_ values: AttributeValues, _ entity: EntityIndex) throws -> AttributeValues? {
        guard values.layout.hasSameNames(as: entity.layout) else {
            let (arranged, unknown) = values.arranged(as: entity.layout)
            guard let arranged else { throw CVManagedStructError.unknownKey(entity: entity.name, key: unknown ?? "") }
            return try resolveArranged(arranged, entity) ?? arranged
        }
        return try resolveArranged(values, entity)
    }

    /// ``resolve(_:_:)`` for values in the entity's layout: read from `values`, copied only at the first value
    /// that changes.
    private func resolveArranged(_ values: AttributeValues, _ entity: EntityIndex) throws -> AttributeValues? {
        var result: AttributeValues?
        // By position, from the entity index's arrays: no attribute (its name, its default) is copied per value;
        // a name is read only for an error.
        let types = entity.types
        let isOptional = entity.isOptional
        let checked = !ruleAt.isEmpty
        for position in types.indices {
            guard let value = values[at: position] else { continue }
            if value.isNull {
                guard isOptional[position] else {
                    throw CVManagedStructError.missingValue(entity: entity.name, key: entity.layout.names[position])
                }
                continue
            }
            var resolved: AttributeValue?
            if value.type != types[position] {
                guard let converted = value.converted(to: types[position]) else {
                    throw CVManagedStructError.typeMismatch(
                        entity: entity.name, key: entity.layout.names[position], expected: types[position].rawValue,
                        found: value.typeDescription)
                }
                resolved = converted
            }
            if checked, ruleAt[position] >= 0,
                let kept = try rules[ruleAt[position]].apply(resolved ?? value, entity, position)
            {
                resolved = kept
            }
            if let resolved {
                if result == nil { result = values }
                result?[at: position] = resolved
            }
        }
        return result
    }
}
