/// What to fetch: an entity, an optional predicate, sort keys, and a window.
public struct FetchRequest: Sendable, Hashable {
    /// The request's values, in one immutable object that copies share: a request passes through a context,
    /// its validation and its store on the way to a read, and each copy of seven fields retained and released
    /// them all (about 2,000 instructions of a request's read by identifier). Setting a property makes a new
    /// object; a request is usually made once and read many times.
    private var values: Values

    private final class Values: Sendable {
        let entityName: String
        let predicate: CVPredicate?
        let sortDescriptors: [CVSortDescriptor]
        let fetchLimit: Int?
        let fetchOffset: Int
        let includesSubentities: Bool
        let validatedEntities: [Entity]?

        init(
            entityName: String, predicate: CVPredicate?, sortDescriptors: [CVSortDescriptor], fetchLimit: Int?,
            fetchOffset: Int, includesSubentities: Bool, validatedEntities: [Entity]?
        ) {
            self.entityName = entityName
            self.predicate = predicate
            self.sortDescriptors = sortDescriptors
            self.fetchLimit = fetchLimit
            self.fetchOffset = fetchOffset
            self.includesSubentities = includesSubentities
            self.validatedEntities = validatedEntities
        }
    }

    /// The entity to fetch.
    public var entityName: String {
        get { values.entityName }
        set { change(entityName: newValue) }
    }
    /// The filter, or `nil` for every object of the entity.
    public var predicate: CVPredicate? {
        get { values.predicate }
        set { change(predicate: .some(newValue)) }
    }
    /// The order; unspecified when empty.
    public var sortDescriptors: [CVSortDescriptor] {
        get { values.sortDescriptors }
        set { change(sortDescriptors: newValue) }
    }
    /// The largest number of objects to return.
    public var fetchLimit: Int? {
        get { values.fetchLimit }
        set { change(fetchLimit: .some(newValue)) }
    }
    /// How many matching objects to skip.
    public var fetchOffset: Int {
        get { values.fetchOffset }
        set { change(fetchOffset: newValue) }
    }
    /// Whether objects of the entity's subentities match too (the default, as in Core Data); `false`
    /// returns only objects of the entity itself, none for an abstract entity.
    public var includesSubentities: Bool {
        get { values.includesSubentities }
        set { change(includesSubentities: newValue) }
    }
    /// The entities of the model ``validated(in:)`` checked and converted this request for, while no property
    /// changed since: validating it again for the same model (a context validates a request, then its store
    /// does) returns it as it is. Not part of its value; changing any property clears it.
    var validatedEntities: [Entity]? { values.validatedEntities }

    /// Equal when every public property is (whether either was validated does not count).
    public static func == (lhs: FetchRequest, rhs: FetchRequest) -> Bool {
        if lhs.values === rhs.values { return true }
        return lhs.entityName == rhs.entityName && lhs.predicate == rhs.predicate
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
        values = Values(
            entityName: entityName, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
            fetchOffset: fetchOffset, includesSubentities: includesSubentities, validatedEntities: nil)
    }

    /// The same request with its predicate converted by validation against `entities` (``validated(in:)``).
    func validated(predicate: CVPredicate?, for entities: [Entity]) -> FetchRequest {
        var request = self
        request.change(predicate: .some(predicate), validatedEntities: .some(entities))
        return request
    }

    /// Replaces the given values (a `nil` argument keeps the current one); the validation is cleared unless
    /// given.
    private mutating func change(
        entityName: String? = nil, predicate: CVPredicate?? = nil, sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int?? = nil, fetchOffset: Int? = nil, includesSubentities: Bool? = nil,
        validatedEntities: [Entity]?? = nil
    ) {
        values = Values(
            entityName: entityName ?? values.entityName, predicate: predicate ?? values.predicate,
            sortDescriptors: sortDescriptors ?? values.sortDescriptors, fetchLimit: fetchLimit ?? values.fetchLimit,
            fetchOffset: fetchOffset ?? values.fetchOffset,
            includesSubentities: includesSubentities ?? values.includesSubentities,
            validatedEntities: validatedEntities ?? nil)
    }

    /// The entities whose objects the request returns: ``entityName`` and, with ``includesSubentities``, its
    /// subentities (``ManagedObjectModel/concreteEntities(of:)``); none of an abstract entity's own.
    public func entityNames(in model: ManagedObjectModel) -> [String] {
        let kinds = model.concreteEntities(of: entityName)
        return includesSubentities ? kinds : kinds.filter { $0 == entityName }
    }
}
