extension CVPredicate {
    /// Checks the predicate against an entity and converts every operand to its attribute's type.
    ///
    /// Stores run this before sending anything, so both stores see the same, typed predicate: operands are
    /// converted losslessly (`30` becomes `int16(30)` for an `int16` attribute), `== .null` becomes
    /// ``isNull(key:)`` and `<> .null` its negation. `isNull` also accepts a to-one relationship's name.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` for a key the entity lacks and
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for an operand that does not fit.
    public func validated(for entity: Entity) throws -> CVPredicate {
        try checkSize(entity: entity.name)
        return try validatedChecked(for: entity, in: nil)
    }

    /// Checks the predicate against an entity of a model, as ``validated(for:)``, following ``related(key:_:)``
    /// into the destination entities.
    ///
    /// - Throws: As ``validated(for:)``; ``CVManagedStructError/unknownKey(entity:key:)`` for a related key
    ///   that names no relationship.
    public func validated(for entity: Entity, in model: ManagedObjectModel) throws -> CVPredicate {
        try checkSize(entity: entity.name)
        return try validatedChecked(for: entity, in: model)
    }

    /// The deepest nesting of `and`, `or` and `not` a predicate may have. Every store validates first, so
    /// validation, SQL compilation and in-memory evaluation never recurse deeper than this, whatever the
    /// input; a flat `and`/`or` of any number of terms counts as one level.
    public static let maximumDepth = 100

    /// The most terms (comparisons, `IN`, `BETWEEN`, string matches, null tests) a predicate may have.
    ///
    /// A predicate often comes from a request's input, and the server plans a long `OR` slowly (70,000
    /// equalities: 35-45 s on a table without statistics) with no statement timeout by default. An `IN` of any
    /// number of values is one term, bound as one array: `.key("id").in(ids)`, or `ids.contains($0.id)` in a
    /// `#Predicate`, is the way to ask for many values.
    public static let maximumTerms = 1_000

    /// How deeply the predicate nests (`and`, `or`, `not` and `related` count one level each), measured without
    /// recursion.
    public var depth: Int { shape.depth }

    /// How many terms the predicate has (see ``maximumTerms``), counted without recursion.
    public var termCount: Int { shape.terms }

    private var shape: (depth: Int, terms: Int) {
        switch self {
        case .and, .or, .not, .related: break
        // One term (a request's `id == k`): no stack to walk.
        default: return (0, 1)
        }
        var deepest = 0
        var terms = 0
        var stack: [(CVPredicate, Int)] = [(self, 0)]
        while let (predicate, level) = stack.popLast() {
            deepest = Swift.max(deepest, level)
            switch predicate {
            case .and(let parts), .or(let parts): for part in parts { stack.append((part, level + 1)) }
            case .not(let inner), .related(_, let inner): stack.append((inner, level + 1))
            default: terms += 1
            }
        }
        return (deepest, terms)
    }

    /// Refuses a predicate nested deeper than ``maximumDepth`` or with more than ``maximumTerms`` terms
    /// (before anything recurses into it or sends it).
    ///
    /// - Throws: ``CVManagedStructError/nestingTooDeep(entity:what:limit:)``,
    ///   ``CVManagedStructError/predicateTooLarge(entity:terms:limit:)``.
    package func checkSize(entity: String) throws {
        let (depth, terms) = shape
        guard depth <= Self.maximumDepth else {
            throw CVManagedStructError.nestingTooDeep(entity: entity, what: "a predicate", limit: Self.maximumDepth)
        }
        guard terms <= Self.maximumTerms else {
            throw CVManagedStructError.predicateTooLarge(entity: entity, terms: terms, limit: Self.maximumTerms)
        }
    }

    private func validatedChecked(for entity: Entity, in model: ManagedObjectModel?) throws -> CVPredicate {
        switch self {
        case .comparison(let key, let op, let value):
            let attribute = try Self.attribute(key, in: entity)
            if value.isNull {
                switch op {
                case .equal: return .isNull(key: key)
                case .notEqual: return .not(.isNull(key: key))
                default:
                    throw CVManagedStructError.typeMismatch(
                        entity: entity.name, key: key, expected: attribute.type.rawValue, found: "null")
                }
            }
            // A value of the attribute's own type converts to itself: the predicate is kept, not rebuilt (a
            // request's `id == k` then allocates no new case).
            if value.type == attribute.type { return self }
            return .comparison(key: key, op, try Self.convert(value, to: attribute, in: entity))
        case .isIn(let key, let values):
            let attribute = try Self.attribute(key, in: entity)
            // The usual list (10,000 identifiers of the attribute's own type) is kept as it is: converting
            // such a value returns it unchanged, and copying the list cost more than checking it.
            let type = attribute.type
            if values.allSatisfy({ $0.type == type }) { return self }
            return .isIn(key: key, try values.map { try Self.convert($0, to: attribute, in: entity) })
        case .between(let key, let lower, let upper):
            let attribute = try Self.attribute(key, in: entity)
            return .between(
                key: key, try Self.convert(lower, to: attribute, in: entity),
                try Self.convert(upper, to: attribute, in: entity))
        case .stringMatch(let key, let match, let operand, _):
            let attribute = try Self.attribute(key, in: entity)
            guard attribute.type == .string else {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: key, expected: "string", found: attribute.type.rawValue)
            }
            try Self.checkLikePattern(match, operand, entity: entity.name, key: key)
            return self
        case .isNull(let key):
            if entity.attribute(named: key) != nil { return self }
            if let relationship = entity.relationship(named: key), !relationship.isToMany { return self }
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        case .and(let predicates): return .and(try predicates.map { try $0.validatedChecked(for: entity, in: model) })
        case .or(let predicates): return .or(try predicates.map { try $0.validatedChecked(for: entity, in: model) })
        case .not(let predicate): return .not(try predicate.validatedChecked(for: entity, in: model))
        case .related(let key, let predicate):
            guard let relationship = entity.relationship(named: key) else {
                throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
            }
            guard let model else {
                throw CVManagedStructError.invalidPredicate(
                    entity: entity.name, key: key, message: "a related predicate needs the model to be checked")
            }
            let destination = try model.entity(relationship.destination)
            return .related(key: key, try predicate.validatedChecked(for: destination, in: model))
        case .true, .false: return self
        }
    }

    /// Every key of the predicate's entity it names (walked without recursion); a ``related(key:_:)`` counts
    /// its relationship, not the destination's keys.
    public var keys: Set<String> {
        var result = Set<String>()
        var stack = [self]
        while let predicate = stack.popLast() {
            switch predicate {
            case .comparison(let key, _, _), .isIn(let key, _), .between(let key, _, _),
                .stringMatch(let key, _, _, _), .isNull(let key):
                result.insert(key)
            case .and(let predicates), .or(let predicates): stack.append(contentsOf: predicates)
            case .not(let predicate): stack.append(predicate)
            case .related(let key, _): result.insert(key)
            case .true, .false: continue
            }
        }
        return result
    }

    /// A `LIKE` pattern may not end in an escape character with nothing to escape (an odd run of trailing
    /// `\`): PostgreSQL refuses it, so every store refuses it before anything is evaluated.
    ///
    /// - Throws: ``CVManagedStructError/invalidPredicate(entity:key:message:)``.
    package static func checkLikePattern(_ match: StringMatch, _ pattern: String, entity: String, key: String) throws {
        guard match == .like else { return }
        let trailing = pattern.reversed().prefix { $0 == "\\" }.count
        guard trailing % 2 == 0 else {
            throw CVManagedStructError.invalidPredicate(
                entity: entity, key: key, message: "LIKE pattern ends with an unescaped \\ (write \\\\ for one)")
        }
    }

    private static func attribute(_ key: String, in entity: Entity) throws -> Attribute {
        guard let attribute = entity.attribute(named: key) else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        }
        return attribute
    }

    private static func convert(_ value: AttributeValue, to attribute: Attribute, in entity: Entity) throws
        -> AttributeValue
    {
        guard let converted = value.converted(to: attribute.type) else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: attribute.name, expected: attribute.type.rawValue,
                found: value.typeDescription)
        }
        return converted
    }
}

extension FetchRequest {
    /// Checks the request against a model: the entity, the predicate's keys and operand types, and the sort
    /// keys (attributes only); returns the request with its predicate converted (see
    /// ``CVPredicate/validated(for:)``).
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``, ``CVManagedStructError/unknownKey(entity:key:)``
    ///   or ``CVManagedStructError/typeMismatch(entity:key:expected:found:)``.
    public func validated(in model: ManagedObjectModel) throws -> FetchRequest {
        // The same model: `==` on its entities stops at their shared storage (a model with equal entities,
        // built apart, is the same model to validation, and compares element by element).
        if let validatedEntities, validatedEntities == model.entities { return self }
        return try validated(in: model, entity: try model.entity(entityName))
    }

    /// ``validated(in:)`` for a caller that already looked up the request's entity in `model` (a context, by
    /// its index): the entity is not looked up by name again.
    package func validated(in model: ManagedObjectModel, entity: Entity) throws -> FetchRequest {
        if let validatedEntities, validatedEntities == model.entities { return self }
        let predicate = try predicate?.validated(for: entity, in: model)
        for sort in sortDescriptors where entity.attribute(named: sort.key) == nil {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: sort.key)
        }
        if let limit = fetchLimit, limit < 0 {
            throw CVManagedStructError.structValueError(message: "negative fetch limit \(limit)")
        }
        if fetchOffset < 0 {
            throw CVManagedStructError.structValueError(message: "negative fetch offset \(fetchOffset)")
        }
        return validated(predicate: predicate, for: model.entities)
    }
}
