@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// Which of the two public APIs a behaviour case goes through: the seed's synchronous calls or their async
/// twins. Every case runs once with each, on both stores, so the two stay the same API.
///
/// Cases write `try await employee.save(context, via: api)`; the overloads below forward to the call of that
/// name in the chosen API and add nothing else.
enum APIMode: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sync
    case async

    var testDescription: String { rawValue }
}

// Each synchronous call is made from a closure: in an async function, a bare call would resolve to the
// async overload.

extension BoxingStruct {
    @discardableResult
    nonisolated(nonsending) func toObject(_ context: ManagedObjectContext?, via api: APIMode) async throws
        -> ManagedObject
    {
        switch api {
        case .sync: return try { try toObject(context) }()
        case .async: return try await toObject(context)
        }
    }

    nonisolated(nonsending) static func query<T: UnboxingStruct>(
        _ context: ManagedObjectContext,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int? = nil,
        fetchOffset: Int = 0,
        via api: APIMode
    ) async throws -> [T] where T.StructureType == T {
        switch api {
        case .sync:
            // The seed's two-argument form when no window is asked for, so both synchronous forms run.
            if fetchLimit == nil && fetchOffset == 0 {
                return try { try query(context, predicate: predicate, sortDescriptors: sortDescriptors) }()
            }
            return try {
                try query(
                    context, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                    fetchOffset: fetchOffset)
            }()
        case .async:
            return try await query(
                context, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                fetchOffset: fetchOffset)
        }
    }
}

extension BoxingStruct {
    nonisolated(nonsending) static func queryStored<T: UnboxingStruct>(
        _ store: any Store, predicate: CVPredicate?, sortDescriptors: [CVSortDescriptor]? = nil,
        fetchLimit: Int? = nil, fetchOffset: Int = 0, via api: APIMode
    ) async throws -> [T] where T.StructureType == T {
        switch api {
        case .sync:
            return try {
                try queryStored(
                    store, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                    fetchOffset: fetchOffset)
            }()
        case .async:
            return try await queryStored(
                store, predicate: predicate, sortDescriptors: sortDescriptors, fetchLimit: fetchLimit,
                fetchOffset: fetchOffset)
        }
    }
}

extension BoxingUniqueStruct {
    nonisolated(nonsending) func save(_ context: ManagedObjectContext, via api: APIMode) async throws {
        switch api {
        case .sync: try { try save(context) }()
        case .async: try await save(context)
        }
    }

    nonisolated(nonsending) func delete(_ context: ManagedObjectContext?, via api: APIMode) async throws {
        switch api {
        case .sync: try { try delete(context) }()
        case .async: try await delete(context)
        }
    }
}

extension BoxingPersistentStruct {
    nonisolated(nonsending) mutating func save(_ context: ManagedObjectContext, via api: APIMode) async throws {
        switch api {
        case .sync: try syncSave(context)
        case .async: try await save(context)
        }
    }

    @discardableResult
    nonisolated(nonsending) mutating func delete(_ context: ManagedObjectContext?, via api: APIMode) async throws
        -> Bool
    {
        switch api {
        case .sync: return try syncDelete(context)
        case .async: return try await delete(context)
        }
    }

    private mutating func syncSave(_ context: ManagedObjectContext) throws { try save(context) }
    private mutating func syncDelete(_ context: ManagedObjectContext?) throws -> Bool { try delete(context) }
}

extension Array where Element: BoxingStruct {
    @discardableResult
    nonisolated(nonsending) func toObjects(_ context: ManagedObjectContext?, via api: APIMode) async throws
        -> [ManagedObject]
    {
        switch api {
        case .sync: return try { try toObjects(context) }()
        case .async: return try await toObjects(context)
        }
    }
}

extension Array where Element: BoxingUniqueStruct {
    nonisolated(nonsending) func saveAll(_ context: ManagedObjectContext, via api: APIMode) async throws {
        switch api {
        case .sync: try { try saveAll(context) }()
        case .async: try await saveAll(context)
        }
    }
}

extension Array where Element: BoxingPersistentStruct {
    nonisolated(nonsending) mutating func saveAll(_ context: ManagedObjectContext, via api: APIMode) async throws {
        switch api {
        case .sync: try syncSaveAll(context)
        case .async: try await saveAll(context)
        }
    }

    private mutating func syncSaveAll(_ context: ManagedObjectContext) throws { try saveAll(context) }
}

extension ManagedObjectContext {
    nonisolated(nonsending) func save(via api: APIMode) async throws {
        switch api {
        case .sync: try { try save() }()
        case .async: try await save()
        }
    }

    nonisolated(nonsending) func fetch(_ request: FetchRequest, via api: APIMode) async throws -> [ManagedObject] {
        switch api {
        case .sync: return try { try fetch(request) }()
        case .async: return try await fetch(request)
        }
    }

    nonisolated(nonsending) func existingObject(with id: ManagedObjectID, via api: APIMode) async throws
        -> ManagedObject
    {
        switch api {
        case .sync: return try { try existingObject(with: id) }()
        case .async: return try await existingObject(with: id)
        }
    }
}

extension BoxingStruct where Self: UnboxingStruct, Self.StructureType == Self {
    nonisolated(nonsending) static func query(
        _ context: ManagedObjectContext, predicate: Predicate<Self>, sortBy: [SortDescriptor<Self>] = [],
        limit: Int? = nil, offset: Int = 0, via api: APIMode
    ) async throws -> [Self] {
        switch api {
        case .sync:
            return try { try query(context, predicate: predicate, sortBy: sortBy, limit: limit, offset: offset) }()
        case .async: return try await query(context, predicate: predicate, sortBy: sortBy, limit: limit, offset: offset)
        }
    }

    nonisolated(nonsending) static func count(
        _ context: ManagedObjectContext, predicate: Predicate<Self>, via api: APIMode
    )
        async throws -> Int
    {
        switch api {
        case .sync: return try { try count(context, predicate: predicate) }()
        case .async: return try await count(context, predicate: predicate)
        }
    }

    nonisolated(nonsending) static func exists(
        _ context: ManagedObjectContext, predicate: Predicate<Self>, via api: APIMode
    )
        async throws -> Bool
    {
        switch api {
        case .sync: return try { try exists(context, predicate: predicate) }()
        case .async: return try await exists(context, predicate: predicate)
        }
    }
}
