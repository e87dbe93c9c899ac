import Foundation

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
        let read: StructFields.Read?
        /// Whether ``read`` returns values of the attribute's type (or null) only, which need no conversion.
        let isExact: Bool
        /// The field's key path (a `PartialKeyPath` of the struct's type), for the general path.
        let keyPath: AnyKeyPath

        init(
            attribute: Attribute, position: Int, read: StructFields.Read?, isExact: Bool,
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
                StructFields.read(value, as: U.self) { $0.objectID }
            }
        }

        private static func identifierReader<U: BoxingUniqueStruct>(_: U.Type) -> (T) -> AttributeValue {
            // `U` is `T` itself (its conformance, opened once): the value is read as a `U` in place, with no
            // dynamic cast per struct.
            guard U.self == T.self else { return { value in (value as? U)?.IdentifierValue().attributeValue ?? .null } }
            return { value in
                StructFields.read(value, as: U.self) { $0.IdentifierValue().attributeValue }
            }
        }
    }

    /// Marks a type whose fields can't be listed with key paths (it takes the `Mirror` path).
    final class Unavailable {}

    /// The key-path plan (or ``Unavailable``) of each struct type but the last one's, unless it was built here.
    @exclusivity(unchecked) var keyPathPlans: [ObjectIdentifier: AnyObject] = [:]
    /// The last key-path plan looked up, with its type's identifier: a context's only one while it boxes one
    /// type (a request's), which then never makes ``keyPathPlans``' table.
    @exclusivity(unchecked) var lastKeyPathPlan: (ObjectIdentifier, AnyObject)?

    /// Makes `plan` the last one looked up; the one it replaces moves to ``keyPathPlans``, so that the cache
    /// still holds every plan it handed out.
    func keepAsLast(_ type: ObjectIdentifier, _ plan: AnyObject) {
        if let (previous, previousPlan) = lastKeyPathPlan, previous != type { keyPathPlans[previous] = previousPlan }
        lastKeyPathPlan = (type, plan)
    }

    /// A plan this cache (or the shared plans) keeps under `T`'s identifier, which is not ``Unavailable``, as
    /// the `KeyPathPlan<T>` it is: only a `KeyPathPlan<T>` is ever kept under `T`'s identifier, so no checked
    /// cast (through the plan's generic metadata) is needed.
    static func keptPlan<T>(_ plan: AnyObject, of type: T.Type) -> KeyPathPlan<T> {
        Unchecked.downcast(plan, to: KeyPathPlan<T>.self)
    }

    /// The key-path plan (or ``Unavailable``) this cache keeps for a type, wherever it keeps it.
    func keptPlan(for type: ObjectIdentifier) -> AnyObject? {
        if let (last, plan) = lastKeyPathPlan, last == type { return plan }
        return keyPathPlans[type]
    }

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
