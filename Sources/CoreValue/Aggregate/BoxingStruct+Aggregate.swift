import Foundation

extension BoxingStruct where Self: UnboxingStruct, Self.StructureType == Self {
    /// One aggregate over the structs a `#Predicate` matches (every one without it), in one statement,
    /// including the context's unsaved changes as `count(_:predicate:)` does.
    ///
    /// ```swift
    /// let total = try Account.aggregate(context, .sum(\.balance), where: #Predicate { $0.active })
    /// let newest = try Account.aggregate(context, .maximum(\.openedAt))
    /// ```
    ///
    /// - Returns: The result; `nil` for a sum, mean, minimum or maximum when no struct has a value (SQL's
    ///   `NULL`), never for a count.
    /// - Throws: ``CVManagedStructError/Code/unsupportedPredicate`` for a key path that names no stored
    ///   attribute of the entity, or a predicate without translation;
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for a function the property's type
    ///   has no meaning for; ``CVManagedStructError/Code/aggregateOverflow`` for an integer sum beyond `Int64`;
    ///   the store's errors.
    public static func aggregate<Value>(
        _ context: ManagedObjectContext, _ aggregate: Aggregate<Self, Value>, where predicate: Predicate<Self>? = nil
    ) throws -> Value? {
        let request = try aggregateRequest(context.model, aggregate, groupedBy: [], predicate)
        return try decode(aggregate, try context.aggregate(request).first?.value ?? .null, request)
    }

    /// An aggregate per group of structs sharing a property's value, in the groups' order (ascending, `nil`
    /// last), in one statement.
    ///
    /// ```swift
    /// for group in try Account.aggregate(context, .sum(\.balance), groupedBy: \.branch) {
    ///     print(group.key, group.value ?? 0)
    /// }
    /// ```
    ///
    /// - Throws: As `aggregate(_:_:where:)`; ``CVManagedStructError/typeMismatch(entity:key:expected:found:)``
    ///   for a null group of a key that is not optional.
    public static func aggregate<Key: AggregateGroupKey, Value>(
        _ context: ManagedObjectContext, _ aggregate: Aggregate<Self, Value>, groupedBy key: KeyPath<Self, Key>,
        where predicate: Predicate<Self>? = nil
    ) throws -> [AggregateGroup<Key, Value>] {
        let request = try aggregateRequest(context.model, aggregate, groupedBy: [key], predicate)
        return try groups(aggregate, try context.aggregate(request), request, Key.self)
    }

    /// `aggregate(_:_:where:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func aggregate<Value>(
        _ context: ManagedObjectContext, _ aggregate: Aggregate<Self, Value>, where predicate: Predicate<Self>? = nil
    ) async throws -> Value? {
        let request = try aggregateRequest(context.model, aggregate, groupedBy: [], predicate)
        let rows = try await context.performBlocking { try context.aggregate(request) }
        return try decode(aggregate, rows.first?.value ?? .null, request)
    }

    /// `aggregate(_:_:groupedBy:where:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func aggregate<Key: AggregateGroupKey, Value>(
        _ context: ManagedObjectContext, _ aggregate: Aggregate<Self, Value>, groupedBy key: KeyPath<Self, Key>,
        where predicate: Predicate<Self>? = nil
    ) async throws -> [AggregateGroup<Key, Value>] {
        let request = try aggregateRequest(context.model, aggregate, groupedBy: [key], predicate)
        let rows = try await context.performBlocking { try context.aggregate(request) }
        return try groups(aggregate, rows, request, Key.self)
    }

    /// The request a typed aggregate sends: key paths named by the struct's stored properties.
    private static func aggregateRequest<Value>(
        _ model: ManagedObjectModel, _ aggregate: Aggregate<Self, Value>, groupedBy keys: [AnyKeyPath],
        _ predicate: Predicate<Self>?
    ) throws -> AggregateRequest {
        let entity = try model.entity(EntityName)
        return AggregateRequest(
            entityName: entity.name, aggregate.function,
            of: try aggregate.keyPath.map {
                try attributeName(of: $0, in: entity, as: "the key path an aggregate folds")
            },
            predicate: try predicate.map { try PredicateTranslator.translate($0, model: model, entity: entity) },
            groupedBy: try keys.map {
                try attributeName(of: $0, in: entity, as: "a key path an aggregate is grouped by")
            })
    }

    private static func decode<Value>(
        _ aggregate: Aggregate<Self, Value>, _ value: AttributeValue,
        _ request: AggregateRequest
    ) throws -> Value? {
        guard !value.isNull else { return nil }
        guard let decoded = aggregate.decode(value) else {
            throw CVManagedStructError.typeMismatch(
                entity: request.entityName, key: request.key ?? "", expected: "\(Value.self)",
                found: value.type?.rawValue ?? "null")
        }
        return decoded
    }

    private static func groups<Key: AggregateGroupKey, Value>(
        _ aggregate: Aggregate<Self, Value>, _ rows: [AggregateRow], _ request: AggregateRequest, _: Key.Type
    ) throws -> [AggregateGroup<Key, Value>] {
        try rows.map { row in
            let stored = row.group.first ?? .null
            guard let key = Key.groupKey(stored) else {
                throw CVManagedStructError.typeMismatch(
                    entity: request.entityName, key: request.groupBy.first ?? "", expected: "\(Key.self)",
                    found: stored.type?.rawValue ?? "null")
            }
            return AggregateGroup(key: key, value: try decode(aggregate, row.value, request))
        }
    }
}
