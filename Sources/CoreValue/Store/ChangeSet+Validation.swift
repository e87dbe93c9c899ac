extension ChangeSet {
    /// Checks everything about a change set that needs no stored data, with the errors every store gives.
    ///
    /// Both `MemoryStore` and `PostgresStore` run this first, so a malformed change set from a direct
    /// ``Store/apply(_:)`` call fails the same way on either, before anything is written: unknown entities
    /// and keys, values that do not convert without loss, required attributes set to null, an upsert key that
    /// is not a unique attribute, a to-one written as a member list or a to-many as a single link,
    /// destinations of the wrong entity, and a member listed twice.
    ///
    /// - Throws: ``CVManagedStructError``: `unknownEntity`, `unknownKey`, `typeMismatch`, `missingValue`,
    ///   `invalidObject` (an insert of a stored ID) or `constraintViolation`.
    package func validate(against index: ModelIndex) throws {
        // The usual run of changes of one entity, with one upsert key: each looked up by name once per run.
        var previous: EntityIndex?
        var checkedUpsertKey: String?
        func entity(of change: ObjectChange) throws -> EntityIndex {
            if let previous, previous.name == change.id.entityName { return previous }
            let found = try index.entity(change.id.entityName)
            previous = found
            checkedUpsertKey = nil
            return found
        }
        for change in inserts {
            let entity = try entity(of: change)
            guard change.id.isTemporary else {
                throw CVManagedStructError.invalidObject(message: "insert of \(change.id), which is already stored")
            }
            try Self.checkAttributes(change.attributes, entity)
            try Self.checkComplete(change.attributes, entity)
            if let upsertKey = change.upsertKey, upsertKey != checkedUpsertKey {
                guard entity.attributes[upsertKey]?.isUnique == true else {
                    throw CVManagedStructError.constraintViolation(
                        entity: entity.name, key: upsertKey, message: "upsert key is not a unique attribute")
                }
                checkedUpsertKey = upsertKey
            }
            try Self.checkToOne(change.toOne, entity)
        }
        for change in updates {
            let entity = try entity(of: change)
            guard !change.id.isTemporary else {
                throw CVManagedStructError.invalidObject(message: "update of \(change.id), which was never saved")
            }
            if change.unlessCurrent, change.version == nil {
                throw CVManagedStructError.invalidObject(
                    message: "update of \(change.id) is to be written unless current, but names no version")
            }
            try Self.checkAttributes(change.attributes, entity)
            try Self.checkToOne(change.toOne, entity)
        }
        for deletion in deletes {
            _ = try index.entity(deletion.id.entityName)
            guard !deletion.id.isTemporary else {
                throw CVManagedStructError.invalidObject(message: "delete of \(deletion.id), which was never saved")
            }
        }
        for change in relationships {
            let entity = try index.entity(change.owner.entityName)
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
        }
    }

    /// Checks that a new row has a value for every required attribute without a default. An upsert too: the
    /// row may turn out to exist, but PostgreSQL checks `NOT NULL` on the proposed row before it looks for a
    /// conflict, so both stores refuse it alike, here, once.
    private static func checkComplete(_ values: AttributeValues, _ entity: EntityIndex) throws {
        let isOptional = entity.isOptional
        let declared = entity.entity.attributes
        let sameLayout = values.layout.hasSameNames(as: entity.layout)
        for position in isOptional.indices where !isOptional[position] && declared[position].defaultValue == nil {
            let given = sameLayout ? values[at: position] : values[declared[position].name]
            if given == nil {
                throw CVManagedStructError.missingValue(entity: entity.name, key: declared[position].name)
            }
        }
    }

    /// What ``convertedAttributes(_:_:)`` checks, without building the converted values.
    private static func checkAttributes(_ values: AttributeValues, _ entity: EntityIndex) throws {
        if values.layout.hasSameNames(as: entity.layout) {
            // The usual case (a context's change set): positions are the entity's, no name is looked up, and
            // no attribute is copied (the entity's arrays of types and optionality; the name only for an error).
            let types = entity.types
            let isOptional = entity.isOptional
            for position in types.indices {
                guard let value = values[at: position] else { continue }
                if value.isNull {
                    if !isOptional[position] { try check(value, entity.entity.attributes[position], entity) }
                } else if value.type != types[position] {
                    try check(value, entity.entity.attributes[position], entity)
                }
            }
            return
        }
        for (key, value) in values { try check(value, try entity.attribute(key), entity) }
    }

    private static func check(_ value: AttributeValue, _ attribute: Attribute, _ entity: EntityIndex) throws {
        if value.isNull {
            guard attribute.isOptional else {
                throw CVManagedStructError.missingValue(entity: entity.name, key: attribute.name)
            }
        } else if value.type != attribute.type, value.converted(to: attribute.type) == nil {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: attribute.name, expected: attribute.type.rawValue,
                found: value.typeDescription)
        }
    }

    /// Attribute values converted losslessly to each attribute's type, in the entity's layout.
    ///
    /// - Throws: `unknownKey`, `typeMismatch` for a value that does not convert without loss, `missingValue`
    ///   for null in a required attribute.
    package static func convertedAttributes(_ values: AttributeValues, _ entity: EntityIndex) throws
        -> AttributeValues
    {
        let (arranged, unknown) = values.arranged(as: entity.layout)
        guard var result = arranged else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: unknown ?? "")
        }
        for (position, attribute) in entity.entity.attributes.enumerated() {
            guard let value = result[at: position] else { continue }
            guard let converted = value.converted(to: attribute.type) else {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: attribute.name, expected: attribute.type.rawValue,
                    found: value.typeDescription)
            }
            if converted.isNull, !attribute.isOptional {
                throw CVManagedStructError.missingValue(entity: entity.name, key: attribute.name)
            }
            if value.type != converted.type { result[at: position] = converted }
        }
        return result
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
        guard id.entityName == relationship.destination else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: relationship.name, expected: relationship.destination,
                found: id.entityName)
        }
    }
}
