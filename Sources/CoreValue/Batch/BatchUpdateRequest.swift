import Foundation

/// A batch update: the same new values for some attributes of every stored row a predicate matches, written
/// by the store in one statement, without fetching or boxing a struct (Core Data's `NSBatchUpdateRequest`).
///
/// Each row's version moves on, so a context that read one of them before and saves it later gets
/// ``CVManagedStructError/Code/conflict`` (a persistent struct) instead of overwriting the batch.
public struct BatchUpdateRequest: Sendable, Hashable {
    /// The entity whose rows are updated.
    public var entityName: String
    /// The rows updated, or `nil` for every row of the entity.
    public var predicate: CVPredicate?
    /// The new value of each attribute set, by name.
    public var values: [String: AttributeValue]
    /// Whether the result lists the IDs of the rows updated (otherwise only their count, whatever their number).
    public var returnsObjectIDs: Bool
    /// Who the batch is by and its name, as a store that records history keeps them (``HistoryTransaction``);
    /// a context's `batchUpdate`/`batchDelete` fills in its own ``ManagedObjectContext/transactionAuthor``
    /// and ``ManagedObjectContext/transactionName`` where these are `nil`.
    public var transactionAuthor: String?
    /// The batch's name in history (see ``transactionAuthor``).
    public var transactionName: String?

    /// Creates a request.
    public init(
        entityName: String, predicate: CVPredicate? = nil, values: [String: AttributeValue],
        returnsObjectIDs: Bool = false
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.values = values
        self.returnsObjectIDs = returnsObjectIDs
    }

    /// The request with its predicate validated and its values converted to their attributes' types, checked
    /// as a save checks them.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``; ``CVManagedStructError/unknownKey(entity:key:)``
    ///   for a name that is no attribute (relationships are not set by a batch);
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)``;
    ///   ``CVManagedStructError/missingValue(entity:key:)`` for a null given to a required attribute;
    ///   ``CVManagedStructError/Code/constraintViolation`` for a unique attribute (every row would get the same
    ///   value); ``CVManagedStructError/Code/structValueError`` when no value is set; the predicate's errors.
    package func validated(in model: ManagedObjectModel) throws -> BatchUpdateRequest {
        let entity = try model.entity(entityName)
        guard !values.isEmpty else {
            throw CVManagedStructError.structValueError(message: "a batch update of \(entity.name) sets no attribute")
        }
        var checked = self
        checked.predicate = try predicate?.validated(for: entity, in: model)
        for (key, value) in values {
            guard let attribute = entity.attribute(named: key) else {
                throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
            }
            if attribute.isUnique {
                throw CVManagedStructError.constraintViolation(
                    entity: entity.name, key: key,
                    message: "a batch update cannot set the unique attribute: every row matched would share the value")
            }
            if value.isNull, !attribute.isOptional {
                throw CVManagedStructError.missingValue(entity: entity.name, key: key)
            }
            guard let converted = value.converted(to: attribute.type) else {
                throw CVManagedStructError.typeMismatch(
                    entity: entity.name, key: key, expected: attribute.type.rawValue, found: value.typeDescription)
            }
            checked.values[key] = converted
        }
        return checked
    }
}

/// What a batch update or delete did: how many rows, and which when asked.
public struct BatchResult: Sendable, Hashable {
    /// How many rows were written.
    public var count: Int
    /// The IDs of the rows, in primary-key order, when the request asked for them; `nil` otherwise.
    public var objectIDs: [ManagedObjectID]?

    /// Creates a result.
    public init(count: Int, objectIDs: [ManagedObjectID]? = nil) {
        self.count = count
        self.objectIDs = objectIDs
    }
}

extension Sequence<ManagedObjectID> {
    /// The IDs in primary-key order, as a ``BatchResult`` lists them.
    package func inKeyOrder() -> [ManagedObjectID] { sorted { ($0.primaryKey ?? 0) < ($1.primaryKey ?? 0) } }
}
