import Foundation

/// One struct to box, reflected into plain values: the first phase of boxing, which touches no context.
///
/// Boxing runs in three phases so that a failure leaves nothing half-filled: reflect every struct of the
/// tree into records (all type and key errors surface here), resolve the records' identities in batches
/// (registered objects, then one store call per entity), and only then write the values into objects.
final class BoxRecord {
    /// How a record finds its object.
    enum Identity {
        /// Always a new object.
        case new
        /// The stored object with this ID (a persistent struct with an `objectID`).
        case objectID(ManagedObjectID)
        /// The object whose unique attribute `key` has `value`, or a new one.
        case unique(key: String, value: AttributeValue)
    }

    /// A relationship destination: another record, or an object given as is.
    enum Target {
        case record(BoxRecord)
        case object(ManagedObject)
    }

    let info: EntityIndex
    let identity: Identity
    /// Each boxed attribute with its position in the entity's layout and its value.
    ///
    /// This and the fields below are unchecked for exclusive access: a record is built and written by one
    /// boxing, on one thread, and each of them is read or written once per struct.
    @exclusivity(unchecked) var attributes: [(Int, AttributeValue)] = []
    @exclusivity(unchecked) var relationships: [(String, [Target])] = []
    /// The attributes the struct type has, shared by every record of the type; `nil` when it has every
    /// attribute of the entity.
    @exclusivity(unchecked) var attributeNames: Set<String>?
    /// The object the record resolved to (phase two) or was written into (phase three).
    @exclusivity(unchecked) var object: ManagedObject?
    /// Whether phase three inserted the record's object: nothing to track or undo in its attributes.
    @exclusivity(unchecked) var isNew = false
    /// Whether the new object got all of ``attributes`` when it was made (see ``completeValues(identifiedAt:_:)``).
    @exclusivity(unchecked) var attributesWritten = false

    init(info: EntityIndex, identity: Identity) {
        self.info = info
        self.identity = identity
    }

    /// Every attribute's value in the entity's layout, for a new object to take at once, when the record sets
    /// each attribute once, in layout order, and the entity has no unique attribute but the identifier at
    /// `position` (whose value must be `identifier`): other unique attributes are indexed as they are
    /// assigned one by one. `nil` otherwise.
    func completeValues(identifiedAt position: Int?, _ identifier: AttributeValue) -> AttributeValues? {
        let layout = info.layout
        let uniques = info.uniquePositions
        let onlyTheIdentifier = position.map { uniques.count == 1 && uniques[0] == $0 } ?? uniques.isEmpty
        guard attributes.count == layout.count, onlyTheIdentifier else { return nil }
        var slots: [AttributeValue?] = []
        slots.reserveCapacity(layout.count)
        for (offset, (at, value)) in attributes.enumerated() {
            guard at == offset else { return nil }
            slots.append(value)
        }
        if let position, ExactValue(slots[position] ?? .null) != ExactValue(identifier) { return nil }
        return AttributeValues(layout: layout, complete: slots)
    }

    /// Whether two record trees box the same values: entities, attribute values (text by its bytes) and
    /// relationship members in the same order, identities aside. Walked without recursion.
    func hasSameContent(as other: BoxRecord) -> Bool {
        var pairs = [(self, other)]
        while let (left, right) = pairs.popLast() {
            guard left.info === right.info, left.attributes.count == right.attributes.count,
                left.relationships.count == right.relationships.count
            else { return false }
            for (a, b) in zip(left.attributes, right.attributes)
            where a.0 != b.0 || ExactValue(a.1) != ExactValue(b.1) {
                return false
            }
            for (a, b) in zip(left.relationships, right.relationships) {
                guard a.0 == b.0, a.1.count == b.1.count else { return false }
                for (x, y) in zip(a.1, b.1) {
                    switch (x, y) {
                    case (.record(let first), .record(let second)): pairs.append((first, second))
                    case (.object(let first), .object(let second)) where first === second: continue
                    default: return false
                    }
                }
            }
        }
        return true
    }

    /// This record and every record below it, depth first.
    var tree: [BoxRecord] {
        var result: [BoxRecord] = []
        var stack = [self]
        while let next = stack.popLast() {
            result.append(next)
            for (_, targets) in next.relationships {
                for case .record(let child) in targets { stack.append(child) }
            }
        }
        return result
    }
}

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
        try withUnsafePointer(to: value) { pointer in
            let base = UnsafeRawPointer(pointer)
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
        // The plan of the type boxed last (a batch is one type): no lookup and no cast per struct. Only
        // a `KeyPathPlan<T>` is ever kept under `T`'s identifier.
        if let (type, plan) = layouts.lastKeyPathPlan, type == key {
            return unsafeDowncast(plan, to: LayoutCache.KeyPathPlan<T>.self)
        }
        if let cached = layouts.keyPathPlans[key] ?? layouts.shared?.plan(for: key) {
            layouts.keyPathPlans[key] = cached
            guard let plan = cached as? LayoutCache.KeyPathPlan<T> else { return nil }
            layouts.lastKeyPathPlan = (key, plan)
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
        layouts.lastKeyPathPlan = (key, plan)
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
            return scratch.attributes[label] ?? .null
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
        if relationship.isToMany, let structs = value as? any _BoxingStructCollection,
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
        let found: String
        if let nested = value as? any BoxingStruct {
            found = Swift.type(of: nested).EntityName
            if found == relationship.destination { return .record(try record(for: nested, depth: depth)) }
        } else if let object = value as? ManagedObject {
            found = object.entity.name
            if found == relationship.destination { return .object(object) }
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

/// The fields of struct types resolved against one model: owned by a context, used by one thread at a time.
package final class LayoutCache {
    /// How boxing reads a struct's fields.
    package enum Reflection: Sendable {
        /// Typed key paths listed once per type (``StructFields``), with `Mirror` where they can't be listed.
        case keyPaths
        /// `Mirror` for every value: the fallback, selectable so that tests cover it.
        case mirror
    }

    /// How contexts box unless told otherwise: ``Reflection/mirror`` when the environment variable
    /// `COREVALUE_REFLECTION` is `mirror` (CI runs the behaviour suite once so, and a user who suspects the
    /// key-path path can compare), ``Reflection/keyPaths`` otherwise. Read once per process.
    package static let defaultReflection: Reflection =
        ProcessInfo.processInfo.environment["COREVALUE_REFLECTION"] == "mirror" ? .mirror : .keyPaths

    /// How this context's boxing reads fields; ``defaultReflection`` unless a test says otherwise.
    ///
    /// This and the plan tables below are read once per boxed struct and unchecked for exclusive access: a
    /// cache belongs to one context, used by one thread at a time.
    @exclusivity(unchecked) package var reflection = LayoutCache.defaultReflection
    /// The key-path plans other contexts of the same model index built; `nil` for a cache of its own.
    let shared: SharedPlans?

    init(shared: SharedPlans? = nil) {
        self.shared = shared
    }

    /// One attribute field of a struct type. Not generic: the boxing loop copies a reference per field, where
    /// a field of a generic type was copied and destroyed through its value witnesses (a quarter of a flat
    /// struct's boxing).
    final class AttributeField {
        let attribute: Attribute
        /// The attribute's position in the entity's layout.
        let position: Int
        /// Reads the field from a pointer to the struct; `nil` when its declared type has no typed reader.
        let read: ((UnsafeRawPointer) -> AttributeValue)?
        /// Whether ``read`` returns values of the attribute's type (or null) only, which need no conversion.
        let isExact: Bool
        /// The field's key path (a `PartialKeyPath` of the struct's type), for the general path.
        let keyPath: AnyKeyPath

        init(
            attribute: Attribute, position: Int, read: ((UnsafeRawPointer) -> AttributeValue)?, isExact: Bool,
            keyPath: AnyKeyPath
        ) {
            self.attribute = attribute
            self.position = position
            self.read = read
            self.isExact = isExact
            self.keyPath = keyPath
        }

        /// The field's value in `value`, for the general path and for error messages.
        func value<T>(of value: T) -> Any {
            // The key path is one of `T`'s own, so it always finds a value (nil only for another type).
            if let field = value[keyPath: keyPath] { return field }
            return Any?.none as Any
        }
    }

    /// A struct type's fields as typed key paths, resolved against the model.
    final class KeyPathPlan<T> {
        let layout: Plan
        /// The attribute fields, in declaration order.
        let attributes: [AttributeField]
        /// The relationship fields, in declaration order.
        let relationships: [(Relationship, PartialKeyPath<T>)]
        /// Whether ``relationships`` has any.
        let hasRelationships: Bool
        /// The struct's `objectID`, for a `BoxingPersistentStruct`.
        let objectID: ((T) -> ManagedObjectID?)?
        /// The struct's identifier value, for a `BoxingUniqueStruct`.
        let identifier: ((T) -> AttributeValue)?

        init(layout: Plan, attributes: [AttributeField], relationships: [(Relationship, PartialKeyPath<T>)]) {
            self.layout = layout
            self.attributes = attributes
            self.relationships = relationships
            hasRelationships = !relationships.isEmpty
            // Read through `T`'s own conformances, found once here: per value, a cast of the struct to
            // `any BoxingPersistentStruct` / `any BoxingUniqueStruct` boxed it and looked the conformance up.
            objectID = (T.self as? any BoxingPersistentStruct.Type).map { Self.objectIDReader($0) }
            identifier = (T.self as? any BoxingUniqueStruct.Type).map { Self.identifierReader($0) }
        }

        private static func objectIDReader<U: BoxingPersistentStruct>(_: U.Type) -> (T) -> ManagedObjectID? {
            // As `identifierReader`: `U` is `T` itself, read in place without a dynamic cast per struct.
            guard U.self == T.self else { return { value in (value as? U)?.objectID } }
            return { value in
                withUnsafePointer(to: value) { pointer in
                    UnsafeRawPointer(pointer).assumingMemoryBound(to: U.self).pointee.objectID
                }
            }
        }

        private static func identifierReader<U: BoxingUniqueStruct>(_: U.Type) -> (T) -> AttributeValue {
            // `U` is `T` itself (its conformance, opened once): the value is read as a `U` in place, with no
            // dynamic cast per struct.
            guard U.self == T.self else { return { value in (value as? U)?.IdentifierValue().attributeValue ?? .null } }
            return { value in
                withUnsafePointer(to: value) { pointer in
                    UnsafeRawPointer(pointer).assumingMemoryBound(to: U.self).pointee.IdentifierValue().attributeValue
                }
            }
        }
    }

    /// Marks a type whose fields can't be listed with key paths (it takes the `Mirror` path).
    final class Unavailable {}

    /// The key-path plan (or ``Unavailable``) of each struct type.
    @exclusivity(unchecked) var keyPathPlans: [ObjectIdentifier: AnyObject] = [:]
    /// The last key-path plan looked up, with its type's identifier.
    @exclusivity(unchecked) var lastKeyPathPlan: (ObjectIdentifier, AnyObject)?

    /// How one stored property of a struct boxes.
    enum Field {
        /// Not boxed (`objectID`, or an unlabelled child).
        case skip
        /// An attribute, with a reader for the field's declared type when it has a fast one.
        case attribute(Attribute, Int, FieldReader?)
        case relationship(Relationship)
    }

    /// A struct type's entity and fields, in declaration order.
    struct Plan {
        let info: EntityIndex
        let fields: [Field]
        let attributeCount: Int
        /// The names of the type's attributes; `nil` when the type has every attribute of the entity. An
        /// upsert sends only these, so that it leaves the other columns of an existing row alone.
        let attributeNames: Set<String>?
        /// How values of the type find their object, resolved once per type.
        let identity: IdentityKind

        /// What kind of identity a struct type has.
        struct IdentityKind {
            /// A `BoxingPersistentStruct`: its `objectID`, when set, names the row.
            let isPersistent: Bool
            /// A `BoxingUniqueStruct`: the (unique) identifier attribute.
            let unique: Attribute?
        }

        init(info: EntityIndex, fields: [Field], identity: IdentityKind) {
            var names = Set<String>()
            for case .attribute(let attribute, _, _) in fields { names.insert(attribute.name) }
            self.init(info: info, fields: fields, attributeNames: names, identity: identity)
        }

        init(info: EntityIndex, fields: [Field] = [], attributeNames names: Set<String>, identity: IdentityKind) {
            self.info = info
            self.fields = fields
            self.identity = identity
            self.attributeCount = names.count
            self.attributeNames = names.count == info.entity.attributes.count ? nil : names
        }
    }

    /// The `Mirror` plan of each struct type.
    var plans: [ObjectIdentifier: Plan] = [:]
}

/// Reads one struct field of a known declared type (`T` or `T?` with `T: AttributeValueConvertible`): a
/// metadata comparison and one cast to the concrete type, instead of probing protocols for every value.
struct FieldReader {
    private let expected: ObjectIdentifier
    private let body: (Any) -> AttributeValue?

    /// A reader for fields of `value`'s dynamic type, or `nil` when the type has no fast path (enums with raw
    /// values, `NSDecimalNumber`, custom `Boxing` types: they take the general path).
    init?(for value: Any) {
        let type = Swift.type(of: value)
        expected = ObjectIdentifier(type)
        if let convertible = type as? any AttributeValueConvertible.Type {
            body = Self.plain(convertible)
        } else if let optional = type as? any _OptionalBoxing.Type,
            let wrapped = optional._wrappedType as? any AttributeValueConvertible.Type
        {
            body = Self.optional(wrapped)
        } else {
            return nil
        }
    }

    /// The field's attribute value, or `nil` when `value` is not of the field's declared type (a field of
    /// existential type holding something else), which sends it down the general path.
    func read(_ value: Any) -> AttributeValue? {
        guard ObjectIdentifier(Swift.type(of: value)) == expected else { return nil }
        return body(value)
    }

    private static func plain<T: AttributeValueConvertible>(_: T.Type) -> (Any) -> AttributeValue? {
        { value in (value as? T)?.attributeValue }
    }

    /// For a value known to be a `T?`: casting to `T` unwraps it, and fails only for `nil`.
    private static func optional<T: AttributeValueConvertible>(_: T.Type) -> (Any) -> AttributeValue? {
        { value in (value as? T)?.attributeValue ?? .null }
    }
}

/// Lets boxing look inside an `Optional` held as `Any`.
protocol _OptionalBoxing {
    var _wrappedValue: Any? { get }
    static var _wrappedType: Any.Type { get }
}

extension Optional: _OptionalBoxing {
    var _wrappedValue: Any? { map { $0 } }
    static var _wrappedType: Any.Type { Wrapped.self }
}

/// Lets boxing list the elements of an array or set held as `Any`, and see its element type.
protocol _BoxingCollection {
    var _boxingElements: [Any] { get }
    static var _boxingElementType: Any.Type { get }
    /// Whether the collection keeps an order (an array: an ordered to-many relationship).
    static var _isOrderedBoxingCollection: Bool { get }
}

/// An array or set of one struct type: its records are built with the type known, without putting each
/// element in an existential and casting it back (see ``RecordBuilder/record(typed:depth:)``).
protocol _BoxingStructCollection {
    /// The elements' records; `nil` when the elements are not of `destination` (the general path then
    /// reports it).
    func _boxingRecords(_ builder: RecordBuilder, destination: String, depth: Int) throws -> [BoxRecord.Target]?
}

extension Array: _BoxingStructCollection where Element: BoxingStruct {
    func _boxingRecords(_ builder: RecordBuilder, destination: String, depth: Int) throws -> [BoxRecord.Target]? {
        guard Element.EntityName == destination else { return nil }
        return try map { .record(try builder.record(typed: $0, depth: depth)) }
    }
}

extension Set: _BoxingStructCollection where Element: BoxingStruct {
    func _boxingRecords(_ builder: RecordBuilder, destination: String, depth: Int) throws -> [BoxRecord.Target]? {
        guard Element.EntityName == destination else { return nil }
        return try map { .record(try builder.record(typed: $0, depth: depth)) }
    }
}

extension Array: _BoxingCollection {
    var _boxingElements: [Any] { map { $0 } }
    static var _boxingElementType: Any.Type { Element.self }
    static var _isOrderedBoxingCollection: Bool { true }
}

extension Set: _BoxingCollection {
    var _boxingElements: [Any] { map { $0 } }
    static var _boxingElementType: Any.Type { Element.self }
    static var _isOrderedBoxingCollection: Bool { false }
}
