/// A filter over an entity's attributes, checked against the model and compiled by each store.
///
/// Named `CVPredicate` so that it does not clash with Foundation's `Predicate`. Build one from cases or with
/// the key-path-like operators in `CVPredicate+Operators.swift`:
///
/// ```swift
/// let adults: CVPredicate = .key("age") > 30 && .key("department") == "Sales"
/// ```
public indirect enum CVPredicate: Sendable, Hashable {
    /// Compares an attribute with a value.
    case comparison(key: String, ComparisonOperator, AttributeValue)
    /// The attribute's value is one of these.
    case isIn(key: String, [AttributeValue])
    /// The attribute's value lies between the bounds, inclusive.
    case between(key: String, AttributeValue, AttributeValue)
    /// A string match: `LIKE`-style pattern, contains, begins with or ends with.
    case stringMatch(key: String, StringMatch, String, caseInsensitive: Bool)
    /// The attribute is null (or the to-one relationship is empty).
    case isNull(key: String)
    /// All of the predicates hold (true when empty).
    case and([CVPredicate])
    /// Any of the predicates holds (false when empty).
    case or([CVPredicate])
    /// The predicate does not hold.
    case not(CVPredicate)
    /// Some object the relationship `key` reaches matches `predicate`, whose keys are the destination
    /// entity's: the related object of a to-one relationship (false when there is none), any member of a
    /// to-many one (SQL `EXISTS`). Never unknown, so it negates as Swift does: `.not(.related(...))` holds
    /// when no related object matches.
    case related(key: String, CVPredicate)
    /// Always true.
    case `true`
    /// Always false.
    case `false`

    /// A comparison operator.
    public enum ComparisonOperator: String, Sendable, Hashable, Codable {
        /// `=`
        case equal = "="
        /// `<>`
        case notEqual = "<>"
        /// `<`
        case lessThan = "<"
        /// `<=`
        case lessThanOrEqual = "<="
        /// `>`
        case greaterThan = ">"
        /// `>=`
        case greaterThanOrEqual = ">="
    }

    /// A kind of string match.
    public enum StringMatch: String, Sendable, Hashable, Codable {
        /// A `LIKE` pattern: `%` matches any run of characters, `_` any one character, `\` escapes.
        case like
        /// The string contains the operand.
        case contains
        /// The string begins with the operand.
        case beginsWith
        /// The string ends with the operand.
        case endsWith
    }
}

/// One sort key: an attribute and a direction. Named so that it does not clash with Foundation's types.
public struct CVSortDescriptor: Sendable, Hashable {
    /// The attribute to sort by.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Creates a sort key.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}

/// What to fetch: an entity, an optional predicate, sort keys, and a window.
public struct FetchRequest: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String { didSet { validatedEntities = nil } }
    /// The filter, or `nil` for every object of the entity.
    public var predicate: CVPredicate? { didSet { validatedEntities = nil } }
    /// The order; unspecified when empty.
    public var sortDescriptors: [CVSortDescriptor] { didSet { validatedEntities = nil } }
    /// The largest number of objects to return.
    public var fetchLimit: Int? { didSet { validatedEntities = nil } }
    /// How many matching objects to skip.
    public var fetchOffset: Int { didSet { validatedEntities = nil } }
    /// Whether objects of the entity's subentities match too (the default, as in Core Data); `false`
    /// returns only objects of the entity itself, none for an abstract entity.
    public var includesSubentities: Bool { didSet { validatedEntities = nil } }
    /// The entities of the model ``validated(in:)`` checked and converted this request for, while no property
    /// changed since: validating it again for the same model (a context validates a request, then its store
    /// does) returns it as it is. Not part of its value.
    var validatedEntities: [Entity]?

    /// Equal when every public property is (whether either was validated does not count).
    public static func == (lhs: FetchRequest, rhs: FetchRequest) -> Bool {
        lhs.entityName == rhs.entityName && lhs.predicate == rhs.predicate
            && lhs.sortDescriptors == rhs.sortDescriptors && lhs.fetchLimit == rhs.fetchLimit
            && lhs.fetchOffset == rhs.fetchOffset && lhs.includesSubentities == rhs.includesSubentities
    }

    /// Hashes every public property (as ``==(_:_:)`` compares them).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entityName)
        hasher.combine(predicate)
        hasher.combine(sortDescriptors)
        hasher.combine(fetchLimit)
        hasher.combine(fetchOffset)
        hasher.combine(includesSubentities)
    }

    /// Creates a fetch request.
    public init(
        entityName: String,
        predicate: CVPredicate? = nil,
        sortDescriptors: [CVSortDescriptor] = [],
        fetchLimit: Int? = nil,
        fetchOffset: Int = 0,
        includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
    }

    /// The entities whose objects the request returns: ``entityName`` and, with ``includesSubentities``, its
    /// subentities (``ManagedObjectModel/concreteEntities(of:)``); none of an abstract entity's own.
    public func entityNames(in model: ManagedObjectModel) -> [String] {
        let kinds = model.concreteEntities(of: entityName)
        return includesSubentities ? kinds : kinds.filter { $0 == entityName }
    }
}
