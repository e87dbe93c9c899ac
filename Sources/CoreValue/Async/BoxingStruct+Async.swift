// The seed's struct API, async: the same names and semantics as the synchronous calls, run on a thread of
// the context's store (see `ManagedObjectContext.performBlocking`). Without a context nothing blocks, and the
// work runs on the caller's thread.

extension BoxingStruct {
    /// Boxes the struct, like ``toObject(_:)``.
    ///
    /// - Throws: As ``toObject(_:)``; `CancellationError` when the task was cancelled.
    @discardableResult
    public nonisolated(nonsending) func toObject(_ context: ManagedObjectContext?) async throws -> ManagedObject {
        guard let context else { return try { try toObject(nil) }() }
        return try await context.performBlocking { try self.toObject(context) }
    }

    /// The structs of type `T` matching a predicate, like ``query(_:predicate:sortDescriptors:)``.
    ///
    /// - Throws: As ``query(_:predicate:sortDescriptors:)``; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) static func query<T: UnboxingStruct>(
        _ context: ManagedObjectContext,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int? = nil,
        fetchOffset: Int = 0
    ) async throws -> [T] where T.StructureType == T {
        try await context.performBlocking {
            try query(
                context, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                fetchOffset: fetchOffset)
        }
    }
}

extension BoxingUniqueStruct {
    /// Boxes and saves the struct, like ``save(_:)`` (a type's own `save` is the one called).
    ///
    /// - Throws: As ``save(_:)``; `CancellationError` when the task was cancelled before the commit.
    public nonisolated(nonsending) func save(_ context: ManagedObjectContext) async throws {
        try await context.performBlocking { try self.save(context) }
    }

    /// Deletes the object with this struct's identifier and saves, like ``delete(_:)``.
    ///
    /// - Throws: As ``delete(_:)``; `CancellationError` when the task was cancelled before the commit.
    public nonisolated(nonsending) func delete(_ context: ManagedObjectContext?) async throws {
        guard let context else { return }
        try await context.performBlocking { try self.delete(context) }
    }
}

extension BoxingPersistentStruct {
    /// Boxes and saves the struct and takes its `objectID`, like ``save(_:)``.
    ///
    /// - Throws: As ``save(_:)``; `CancellationError` when the task was cancelled before the commit (the
    ///   struct is left as it was).
    public nonisolated(nonsending) mutating func save(_ context: ManagedObjectContext) async throws {
        self = try await context.performMutating(self) { try $0.save(context) }.value
    }

    /// Deletes the struct's object and saves, like ``delete(_:)``; clears `objectID` when it deleted one.
    ///
    /// - Returns: Whether an object was deleted.
    /// - Throws: As ``delete(_:)``; `CancellationError` when the task was cancelled before the commit.
    @discardableResult
    public nonisolated(nonsending) mutating func delete(_ context: ManagedObjectContext?) async throws -> Bool {
        guard let context else { return try { try delete(nil) }() }
        let (value, deleted) = try await context.performMutating(self) { try $0.delete(context) }
        self = value
        return deleted
    }
}

extension Array where Element: BoxingStruct {
    /// Boxes every element in one batch, like ``toObjects(_:)``.
    ///
    /// - Throws: As ``toObjects(_:)``; `CancellationError` when the task was cancelled.
    @discardableResult
    public nonisolated(nonsending) func toObjects(_ context: ManagedObjectContext?) async throws -> [ManagedObject] {
        guard let context else { return try { try toObjects(nil) }() }
        return try await context.performBlocking { try self.toObjects(context) }
    }
}

extension Array where Element: BoxingUniqueStruct {
    /// Boxes every element and saves once, like ``saveAll(_:)``.
    ///
    /// - Throws: As ``saveAll(_:)``; `CancellationError` when the task was cancelled before the commit.
    public nonisolated(nonsending) func saveAll(_ context: ManagedObjectContext) async throws {
        try await context.performBlocking { try self.saveAll(context) }
    }
}

extension Array where Element: BoxingPersistentStruct {
    /// Boxes every element, saves once and writes the `objectID`s back, like ``saveAll(_:)``.
    ///
    /// - Throws: As ``saveAll(_:)``; `CancellationError` when the task was cancelled before the commit (the
    ///   array is left as it was).
    public nonisolated(nonsending) mutating func saveAll(_ context: ManagedObjectContext) async throws {
        self = try await context.performMutating(self) { try $0.saveAll(context) }.value
    }
}

extension BoxingStruct {
    /// The stored structs of type `T` matching a predicate, read straight from the store without a context,
    /// like ``queryStored(_:predicate:sortDescriptors:fetchLimit:fetchOffset:)``; the work runs on one of the
    /// store's threads.
    ///
    /// - Throws: As ``queryStored(_:predicate:sortDescriptors:fetchLimit:fetchOffset:)``; `CancellationError`
    ///   when the task was cancelled.
    public nonisolated(nonsending) static func queryStored<T: UnboxingStruct>(
        _ store: any Store,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int? = nil,
        fetchOffset: Int = 0
    ) async throws -> [T] where T.StructureType == T {
        try await ManagedObjectContext.performBlocking(on: store.refinements) {
            try queryStored(
                store, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                fetchOffset: fetchOffset)
        }
    }
}
