import Foundation

/// One attribute a typed batch update sets, by a key path of the struct: `.set(\.active, to: false)`.
///
/// Not `Sendable` (a key path is not): the async call reads its attribute name on the caller's side.
public struct BatchAssignment<Root> {
    let keyPath: AnyKeyPath
    let value: AttributeValue

    /// Sets a property to a value.
    public static func set<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V>, to value: V) -> Self {
        Self(keyPath: keyPath, value: value.attributeValue)
    }

    /// Sets an optional property to a value or to `nil`.
    public static func set<V: AttributeValueConvertible>(_ keyPath: KeyPath<Root, V?>, to value: V?) -> Self {
        Self(keyPath: keyPath, value: value?.attributeValue ?? .null)
    }
}

extension BoxingStruct where Self: UnboxingStruct, Self.StructureType == Self {
    /// Sets properties of every stored struct a `#Predicate` matches (every one without it), in one statement,
    /// without fetching them; see `ManagedObjectContext.batchUpdate(_:)` for what the
    /// context does around it.
    ///
    /// ```swift
    /// let cutoff = Date.now.addingTimeInterval(-365 * 86_400)
    /// let result = try Account.batchUpdate(
    ///     context, set: [.set(\.active, to: false)], where: #Predicate { $0.seenAt < cutoff })
    /// ```
    ///
    /// - Throws: ``CVManagedStructError/Code/unsupportedPredicate`` for a key path that names no stored
    ///   attribute or a predicate without translation, and the request's validation errors, before anything
    ///   is sent; the store's errors.
    public static func batchUpdate(
        _ context: ManagedObjectContext, set assignments: [BatchAssignment<Self>],
        where predicate: Predicate<Self>? = nil,
        returningObjectIDs: Bool = false
    ) throws -> BatchResult {
        try context.batchUpdate(try batchRequest(context.model, assignments, predicate, returningObjectIDs))
    }

    /// `batchUpdate(_:set:where:returningObjectIDs:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func batchUpdate(
        _ context: ManagedObjectContext, set assignments: [BatchAssignment<Self>],
        where predicate: Predicate<Self>? = nil,
        returningObjectIDs: Bool = false
    ) async throws -> BatchResult {
        let request = try batchRequest(context.model, assignments, predicate, returningObjectIDs)
        return try await context.performBlocking { try context.batchUpdate(request) }
    }

    /// Deletes every stored struct a `#Predicate` matches (every one without it), with the entity's delete
    /// rules, without fetching them; see `ManagedObjectContext.batchDelete(_:)` for how and what the context
    /// does around it.
    ///
    /// ```swift
    /// let cutoff = Date.now.addingTimeInterval(-86_400)
    /// let result = try Session.batchDelete(context, where: #Predicate { $0.createdAt < cutoff })
    /// ```
    ///
    /// - Throws: ``CVManagedStructError/Code/unsupportedPredicate`` for a predicate without translation, before
    ///   anything is sent; ``CVManagedStructError/constraintViolation(entity:key:message:)`` for a `deny`
    ///   rule; the store's errors.
    public static func batchDelete(
        _ context: ManagedObjectContext, where predicate: Predicate<Self>? = nil, returningObjectIDs: Bool = false
    ) throws -> BatchResult {
        try context.batchDelete(try deleteRequest(context.model, predicate, returningObjectIDs))
    }

    /// `batchDelete(_:where:returningObjectIDs:)` without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As the synchronous form; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func batchDelete(
        _ context: ManagedObjectContext, where predicate: Predicate<Self>? = nil, returningObjectIDs: Bool = false
    ) async throws -> BatchResult {
        let request = try deleteRequest(context.model, predicate, returningObjectIDs)
        return try await context.performBlocking { try context.batchDelete(request) }
    }

    private static func deleteRequest(
        _ model: ManagedObjectModel, _ predicate: Predicate<Self>?, _ returningObjectIDs: Bool
    ) throws -> BatchDeleteRequest {
        let entity = try model.entity(EntityName)
        return BatchDeleteRequest(
            entityName: entity.name,
            predicate: try predicate.map { try PredicateTranslator.translate($0, model: model, entity: entity) },
            returnsObjectIDs: returningObjectIDs)
    }

    private static func batchRequest(
        _ model: ManagedObjectModel, _ assignments: [BatchAssignment<Self>], _ predicate: Predicate<Self>?,
        _ returningObjectIDs: Bool
    ) throws -> BatchUpdateRequest {
        let entity = try model.entity(EntityName)
        var values: [String: AttributeValue] = [:]
        for assignment in assignments {
            values[try attributeName(of: assignment.keyPath, in: entity, as: "a key path a batch update sets")] =
                assignment.value
        }
        return BatchUpdateRequest(
            entityName: entity.name,
            predicate: try predicate.map { try PredicateTranslator.translate($0, model: model, entity: entity) },
            values: values, returnsObjectIDs: returningObjectIDs)
    }

    /// The attribute a key path of the struct names.
    ///
    /// - Throws: ``CVManagedStructError/Code/unsupportedPredicate`` naming `role` for a computed property or a
    ///   property that is no attribute of the entity.
    static func attributeName(of keyPath: AnyKeyPath, in entity: Entity, as role: String) throws -> String {
        guard let name = FieldNames.name(of: keyPath, in: Self.self), entity.attribute(named: name) != nil else {
            throw CVManagedStructError.unsupportedPredicate(
                entity: entity.name, what: role,
                message: "only a stored property of \(Self.self) that is an attribute of the entity can be used")
        }
        return name
    }
}
