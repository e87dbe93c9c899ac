import Foundation

/// Reflects structs into ``BoxRecord``s.
struct RecordBuilder {
    /// Finds an entity by name: the context's model, or the one derived from the struct types boxed.
    let entity: (String) throws -> EntityIndex
    /// Per-type layouts, kept by the context so that each struct type is resolved against the model once.
    let layouts: LayoutCache

    /// The record of one struct and, below it, of every struct nested in it.
    ///
    /// - Parameter depth: How many structs enclose this one; past ``ManagedObjectContext/maximumGraphDepth``
    ///   boxing throws instead of recursing further.
    func record(for value: any BoxingStruct, depth: Int = 0) throws -> BoxRecord {
        let type = Swift.type(of: value)
        guard depth < ManagedObjectContext.maximumGraphDepth else {
            throw CVManagedStructError.nestingTooDeep(
                entity: type.EntityName, what: "a graph of nested structs",
                limit: ManagedObjectContext.maximumGraphDepth)
        }
        if layouts.reflection != .mirror, let record = try keyPathRecord(value, depth: depth) { return record }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else {
            throw CVManagedStructError.structConversionError(message: "\(type) is not a struct")
        }
        let plan = try self.plan(of: type, mirror)
        let info = plan.info
        let record = BoxRecord(info: info, identity: try identity(of: value, plan))
        record.attributes.reserveCapacity(plan.attributeCount)
        record.attributeNames = plan.attributeNames
        for (child, field) in zip(mirror.children, plan.fields) {
            switch field {
            case .skip: continue
            case .attribute(let attribute, let position, let reader):
                // The field's reader casts to the one concrete type the field was declared with; any other
                // value (a field of existential type) takes the general path.
                let value = try reader?.read(child.value) ?? attributeValue(child.value, attribute.name, info)
                record.attributes.append((position, try converted(value, attribute, info, field: child.value)))
            case .relationship(let relationship):
                record.relationships.append(
                    (relationship.name, try targets(child.value, relationship, info, depth: depth + 1)))
            }
        }
        return record
    }

    /// Whether structs of `value`'s type set every attribute of their entity (what an upsert without a lookup
    /// needs, `BoxingSession.canUpsertBlindly`), from the type's plan: no record is built.
    func setsEveryAttribute<T: BoxingStruct>(_ value: T) throws -> Bool {
        if layouts.reflection != .mirror, let plan = try keyPathPlan(of: T.self) {
            return plan.layout.attributeNames == nil
        }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .struct else {
            throw CVManagedStructError.structConversionError(message: "\(T.self) is not a struct")
        }
        return try plan(of: T.self, mirror).attributeNames == nil
    }

    /// ``record(for:depth:)`` for a struct whose type is known statically (the elements of a `[T]`): no
    /// existential box per element, no cast.
    func record<T: BoxingStruct>(typed value: T, depth: Int) throws -> BoxRecord {
        if depth < ManagedObjectContext.maximumGraphDepth, layouts.reflection != .mirror,
            let record = try keyPathRecord(value, depth: depth)
        {
            return record
        }
        // Too deep (it throws), the Mirror path asked for, or a type the key paths cannot list.
        return try record(for: value, depth: depth)
    }

    /// The record of a struct read through its type's key paths (no `Mirror`); `nil` when the type's fields
    /// cannot be listed that way, which sends it down the `Mirror` path.
    private func keyPathRecord<T: BoxingStruct>(_ value: T, depth: Int) throws -> BoxRecord? {
        guard let plan = try keyPathPlan(of: T.self) else { return nil }
        let info = plan.layout.info
        let record = BoxRecord(info: info, identity: try identity(of: value, plan))
        record.attributeNames = plan.layout.attributeNames
        // Filled here and stored once: appending to the record's property per field checked exclusive access
        // to it every time (the record is a class).
        var attributes: [(Int, AttributeValue)] = []
        attributes.reserveCapacity(plan.layout.attributeCount)
        try StructFields.withAddress(of: value) { base in
            for field in plan.attributes {
                let raw: AttributeValue
                if let read = field.read {
                    raw = read(base)
                    // Of the attribute's own type (or null): nothing to convert.
                    if field.isExact {
                        attributes.append((field.position, raw))
                        continue
                    }
                } else {
                    raw = try attributeValue(field.value(of: value), field.attribute.name, info)
                }
                attributes.append(
                    (field.position, try converted(raw, field.attribute, info, field: field.value(of: value))))
            }
        }
        record.attributes = attributes
        // Checked first: walking even an empty array of `(Relationship, PartialKeyPath<T>)` looked up its
        // element type's metadata for every struct.
        guard plan.hasRelationships else { return record }
        for (relationship, keyPath) in plan.relationships {
            record.relationships.append(
                (relationship.name, try targets(value[keyPath: keyPath], relationship, info, depth: depth + 1)))
        }
        return record
    }

    /// A field's value as its attribute's type, without loss.
    ///
    /// - Throws: ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` naming the field's type
    ///   (only evaluated then).
    private func converted(
        _ value: AttributeValue, _ attribute: Attribute, _ info: EntityIndex, field: @autoclosure () -> Any
    ) throws -> AttributeValue {
        guard let converted = value.converted(to: attribute.type) else {
            throw CVManagedStructError.typeMismatch(
                entity: info.name, key: attribute.name, expected: attribute.type.rawValue,
                found: "\(Swift.type(of: field()))")
        }
        return converted
    }

    /// The key-path plan of a struct type: from the cache, or built (and cached) once per type.
    private func keyPathPlan<T: BoxingStruct>(of type: T.Type) throws -> LayoutCache.KeyPathPlan<T>? {
        let key = ObjectIdentifier(type)
        // The plan of the type boxed last (a batch is one type): no lookup and no cast per struct.
        if let (type, plan) = layouts.lastKeyPathPlan, type == key { return LayoutCache.keptPlan(plan, of: T.self) }
        // A fresh context (a request's) has no plans of its own yet: its first type's plan comes from the
        // shared ones and is kept as the last one only, with no table made for it and no cast through the
        // plan's generic metadata.
        let own = layouts.keyPathPlans.isEmpty ? nil : layouts.keyPathPlans[key]
        if let cached = own ?? layouts.shared?.plan(for: key) {
            if cached is LayoutCache.Unavailable {
                if own == nil { layouts.keyPathPlans[key] = cached }
                return nil
            }
            let plan = LayoutCache.keptPlan(cached, of: T.self)
            layouts.keepAsLast(key, plan)
            return plan
        }
        // A type with a custom mirror says itself which fields it shows: honour it, as the Mirror path does.
        guard !(type is any CustomReflectable.Type), let listed = StructFields.keyPaths(of: type) else {
            let unavailable = LayoutCache.Unavailable()
            layouts.keyPathPlans[key] = unavailable
            layouts.shared?.keep(unavailable, for: key)
            return nil
        }
        let info = try entity(type.EntityName)
        var attributes: [LayoutCache.AttributeField] = []
        var relationships: [(Relationship, PartialKeyPath<T>)] = []
        var names = Set<String>()
        for (label, keyPath) in listed where label != "objectID" {
            if let attribute = info.attributes[label], let position = info.layout.position(of: label) {
                let reader = KeyPathReader(keyPath)
                attributes.append(
                    LayoutCache.AttributeField(
                        attribute: attribute, position: position, read: reader?.read,
                        isExact: reader?.valueType == attribute.type, keyPath: keyPath))
                names.insert(label)
            } else if let relationship = info.relationships[label] {
                relationships.append((relationship, keyPath))
            } else {
                throw CVManagedStructError.unknownKey(entity: info.name, key: label)
            }
        }
        let layout = LayoutCache.Plan(
            info: info, attributeNames: names, identity: try identityKind(of: type, info))
        let plan = LayoutCache.KeyPathPlan<T>(layout: layout, attributes: attributes, relationships: relationships)
        layouts.keyPathPlans[key] = plan
        layouts.shared?.keep(plan, for: key)
        layouts.keepAsLast(key, plan)
        return plan
    }

    /// The entity and fields of a struct type resolved against the model: from the cache, or computed (and
    /// cached) from this first value's mirror.
    private func plan(of type: any BoxingStruct.Type, _ mirror: Mirror) throws -> LayoutCache.Plan {
        let key = ObjectIdentifier(type)
        if let cached = layouts.plans[key] { return cached }
        let info = try entity(type.EntityName)
        var fields: [LayoutCache.Field] = []
        for child in mirror.children {
            guard let label = child.label, label != "objectID" else {
                fields.append(.skip)
                continue
            }
            if let attribute = info.attributes[label], let position = info.layout.position(of: label) {
                fields.append(.attribute(attribute, position, FieldReader(for: child.value)))
            } else if let relationship = info.relationships[label] {
                fields.append(.relationship(relationship))
            } else {
                throw CVManagedStructError.unknownKey(entity: info.name, key: label)
            }
        }
        let plan = LayoutCache.Plan(info: info, fields: fields, identity: try identityKind(of: type, info))
        layouts.plans[key] = plan
        return plan
    }

    /// The identity kind of a struct type; checks once that a unique struct's identifier is a unique attribute.
    private func identityKind(of type: any BoxingStruct.Type, _ info: EntityIndex) throws
        -> LayoutCache.Plan.IdentityKind
    {
        guard let unique = type as? any BoxingUniqueStruct.Type else {
            return .init(isPersistent: type is any BoxingPersistentStruct.Type, unique: nil)
        }
        let key = unique.IdentifierName
        let attribute = try info.attribute(key)
        guard attribute.isUnique else {
            throw CVManagedStructError.invalidModel(
                entity: info.name, key: key,
                message: "\(type) is identified by '\(key)', which the model does not mark unique: true")
        }
        return .init(isPersistent: type is any BoxingPersistentStruct.Type, unique: attribute)
    }

    private func identity(of value: any BoxingStruct, _ plan: LayoutCache.Plan) throws -> BoxRecord.Identity {
        try identity(
            plan, objectID: { (value as? any BoxingPersistentStruct)?.objectID },
            identifier: { (value as? any BoxingUniqueStruct)?.IdentifierValue().attributeValue })
    }

    /// The identity of a value boxed through its key-path plan, read through the plan's typed readers.
    private func identity<T>(of value: T, _ plan: LayoutCache.KeyPathPlan<T>) throws -> BoxRecord.Identity {
        try identity(
            plan.layout, objectID: { plan.objectID?(value) }, identifier: { plan.identifier?(value) })
    }

    private func identity(
        _ plan: LayoutCache.Plan, objectID: () -> ManagedObjectID?, identifier: () -> AttributeValue?
    ) throws -> BoxRecord.Identity {
        let info = plan.info
        if plan.identity.isPersistent, let id = objectID() {
            guard id.entityName == info.name else {
                throw CVManagedStructError.structUpdateError(
                    message: "objectID \(id) belongs to entity '\(id.entityName)', not '\(info.name)'")
            }
            return .objectID(id)
        }
        if let attribute = plan.identity.unique, let raw = identifier() {
            guard let converted = raw.converted(to: attribute.type), !converted.isNull else {
                throw CVManagedStructError.typeMismatch(
                    entity: info.name, key: attribute.name, expected: attribute.type.rawValue,
                    found: raw.typeDescription)
            }
            return .unique(key: attribute.name, value: converted)
        }
        return .new
    }

    private func attributeValue(_ value: Any, _ label: String, _ info: EntityIndex) throws -> AttributeValue {
        if let optional = value as? any _OptionalBoxing {
            guard let wrapped = optional._wrappedValue else { return .null }
            return try attributeValue(wrapped, label, info)
        }
        if let convertible = value as? any AttributeValueConvertible { return convertible.attributeValue }
        if let decimal = value as? NSDecimalNumber { return .decimal(decimal.decimalValue) }
        if let raw = value as? any RawRepresentable { return try attributeValue(rawValue(of: raw), label, info) }
        if let custom = value as? any Boxing {
            let scratch = ManagedObject(info: info, objectID: .temporary(info.name), handle: nil)
            try custom.box(scratch, withKey: label)
            return scratch.attribute(named: label) ?? .null
        }
        throw CVManagedStructError.structValueError(
            message: "Could not box field '\(label)' of \(info.name): unsupported type \(type(of: value))")
    }

    private func targets(_ value: Any, _ relationship: Relationship, _ info: EntityIndex, depth: Int) throws
        -> [BoxRecord.Target]
    {
        if let optional = value as? any _OptionalBoxing {
            guard let wrapped = optional._wrappedValue else { return [] }
            return try targets(wrapped, relationship, info, depth: depth)
        }
        // Members of a destination with subentities may be of several struct types (a variant's cases): the
        // general path looks at each.
        if relationship.isToMany, !info.linksSubentities(relationship),
            let structs = value as? any _BoxingStructCollection,
            let records = try structs._boxingRecords(self, destination: relationship.destination, depth: depth)
        {
            return records
        }
        if let collection = value as? any _BoxingCollection {
            guard relationship.isToMany else {
                throw CVManagedStructError.typeMismatch(
                    entity: info.name, key: relationship.name, expected: "one \(relationship.destination)",
                    found: "\(type(of: value))")
            }
            return try collection._boxingElements.map { try target($0, relationship, info, depth: depth) }
        }
        guard !relationship.isToMany else {
            throw CVManagedStructError.typeMismatch(
                entity: info.name, key: relationship.name, expected: "a collection of \(relationship.destination)",
                found: "\(type(of: value))")
        }
        return [try target(value, relationship, info, depth: depth)]
    }

    private func target(_ value: Any, _ relationship: Relationship, _ info: EntityIndex, depth: Int) throws
        -> BoxRecord.Target
    {
        var value = value
        // A variant (an enum over a hierarchy's structs) boxes as the struct it holds; looked for only where
        // the destination has subentities.
        if info.linksSubentities(relationship), let variant = value as? any BoxingVariant {
            value = variant.boxedStruct
        }
        let found: String
        if let nested = value as? any BoxingStruct {
            found = Swift.type(of: nested).EntityName
            if found == relationship.destination || info.isDestination(relationship, kindOf: found) {
                return .record(try record(for: nested, depth: depth))
            }
        } else if let object = value as? ManagedObject {
            found = object.entity.name
            if found == relationship.destination || info.isDestination(relationship, kindOf: found) {
                return .object(object)
            }
        } else {
            throw CVManagedStructError.structValueError(
                message: "Could not box field '\(relationship.name)' of \(info.name): \(type(of: value)) is not a "
                    + "BoxingStruct")
        }
        throw CVManagedStructError.typeMismatch(
            entity: info.name, key: relationship.name, expected: relationship.destination, found: found)
    }

    private func rawValue<T: RawRepresentable>(of value: T) -> Any { value.rawValue }
}
