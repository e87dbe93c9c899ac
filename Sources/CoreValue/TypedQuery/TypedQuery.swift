import Foundation

// Typed queries: Foundation's `#Predicate` and `SortDescriptor` over the user's own struct, translated to a
// `FetchRequest` before any store call (see `PredicateTranslator`).

extension BoxingStruct where Self: UnboxingStruct, Self.StructureType == Self {
    /// The fetch request a typed query sends: the predicate translated to a ``CVPredicate`` on the struct's
    /// entity, the sort descriptors to attribute names.
    ///
    /// ```swift
    /// let request = try Employee.fetchRequest(
    ///     model, predicate: #Predicate { $0.age > 30 && $0.department == "Sales" },
    ///     sortBy: [SortDescriptor(\.age, order: .reverse)])
    /// ```
    ///
    /// - Throws: ``CVManagedStructError/Code/unsupportedPredicate`` for an expression with no translation,
    ///   naming it; ``CVManagedStructError/unknownEntity(_:)`` and ``CVManagedStructError/unknownKey(entity:key:)``
    ///   for names the model lacks.
    public static func fetchRequest(
        _ model: ManagedObjectModel,
        predicate: Predicate<Self>,
        sortBy: [SortDescriptor<Self>] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) throws -> FetchRequest {
        let entity = try model.entity(EntityName)
        return FetchRequest(
            entityName: entity.name,
            predicate: try PredicateTranslator.translate(predicate, model: model, entity: entity),
            sortDescriptors: try sortBy.map { try PredicateTranslator.translate($0, entity: entity) },
            fetchLimit: limit, fetchOffset: offset)
    }

    /// The structs matching a `#Predicate`, sorted by `SortDescriptor`s, skipping `offset` and returning at
    /// most `limit`, including the context's unsaved changes as every fetch does.
    ///
    /// ```swift
    /// let seniors = try Employee.query(
    ///     context, predicate: #Predicate { $0.age > 60 && $0.department == "Sales" },
    ///     sortBy: [SortDescriptor(\.name)])
    /// ```
    ///
    /// Comparisons keep Swift's meaning (a `nil` optional is not equal to any value, and `!=` holds for
    /// it), and both stores return what `predicate.evaluate` says of the stored values. Strings sort by
    /// Unicode scalar (the stores' order), whatever comparator the descriptor names.
    ///
    /// - Throws: As ``fetchRequest(_:predicate:sortBy:limit:offset:)``, before any store call; the store's
    ///   errors; unboxing errors.
    public static func query(
        _ context: ManagedObjectContext,
        predicate: Predicate<Self>,
        sortBy: [SortDescriptor<Self>] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) throws -> [Self] {
        let request = try fetchRequest(
            context.model, predicate: predicate, sortBy: sortBy, limit: limit, offset: offset)
        return try context.fetch(request).map { try Self.unbox(.object($0)) }
    }

    /// How many structs match a `#Predicate`, including unsaved changes: one `SELECT count(*)` when the
    /// context has no unsaved changes of the entity.
    ///
    /// - Throws: As ``query(_:predicate:sortBy:limit:offset:)-g8tl``.
    public static func count(_ context: ManagedObjectContext, predicate: Predicate<Self>) throws -> Int {
        try context.count(for: fetchRequest(context.model, predicate: predicate))
    }

    /// Whether any struct matches a `#Predicate`, including unsaved changes: one statement that stops at the
    /// first matching row.
    ///
    /// - Throws: As ``query(_:predicate:sortBy:limit:offset:)-g8tl``.
    public static func exists(_ context: ManagedObjectContext, predicate: Predicate<Self>) throws -> Bool {
        try context.count(for: fetchRequest(context.model, predicate: predicate, limit: 1)) > 0
    }

    /// The structs matching a `#Predicate`, like ``query(_:predicate:sortBy:limit:offset:)``, without
    /// blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func query(
        _ context: ManagedObjectContext,
        predicate: Predicate<Self>,
        sortBy: [SortDescriptor<Self>] = [],
        limit: Int? = nil,
        offset: Int = 0
    ) async throws -> [Self] {
        let request = try fetchRequest(
            context.model, predicate: predicate, sortBy: sortBy, limit: limit, offset: offset)
        return try await context.performBlocking { try context.fetch(request).map { try Self.unbox(.object($0)) } }
    }

    /// How many structs match a `#Predicate`, like ``count(_:predicate:)``, without blocking.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func count(_ context: ManagedObjectContext, predicate: Predicate<Self>)
        async throws -> Int
    {
        try await context.count(for: fetchRequest(context.model, predicate: predicate))
    }

    /// Whether any struct matches a `#Predicate`, like ``exists(_:predicate:)``, without blocking.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func exists(_ context: ManagedObjectContext, predicate: Predicate<Self>)
        async throws -> Bool
    {
        try await context.count(for: fetchRequest(context.model, predicate: predicate, limit: 1)) > 0
    }
}

extension BoxingStruct {
    /// How many objects of the struct's entity match a string-keyed predicate, including unsaved changes.
    ///
    /// - Throws: As ``query(_:predicate:sortDescriptors:)``.
    public static func count(_ context: ManagedObjectContext, predicate: CVPredicate?) throws -> Int {
        try context.count(for: FetchRequest(entityName: EntityName, predicate: predicate))
    }

    /// Whether any object of the struct's entity matches a string-keyed predicate, including unsaved changes.
    ///
    /// - Throws: As ``query(_:predicate:sortDescriptors:)``.
    public static func exists(_ context: ManagedObjectContext, predicate: CVPredicate?) throws -> Bool {
        try context.count(for: FetchRequest(entityName: EntityName, predicate: predicate, fetchLimit: 1)) > 0
    }
}

extension ManagedObjectContext {
    /// How many objects match a request, like ``count(for:)``, without blocking a thread of the cooperative
    /// pool.
    ///
    /// - Throws: As ``count(for:)``; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func count(for request: FetchRequest) async throws -> Int {
        try await performBlocking { try self.count(for: request) }
    }
}
