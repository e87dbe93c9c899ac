/// A value handed across threads by an async call whose task waits for it: the task is suspended while
/// another thread uses the value, so the two never touch it at once.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}

/// The work of one `performBlocking` call, run once on the store's thread and released as soon as it ran.
private final class BlockingWork<T>: @unchecked Sendable {
    // Touched by the store's thread only, while the task that made it is suspended.
    private var body: (() throws -> T)?

    init(_ body: @escaping () throws -> T) { self.body = body }

    func run(_ token: CancellationToken) throws -> T {
        guard let body else { throw CancellationError() }
        self.body = nil
        try token.checkCancellation()
        return try token.makeCurrent { try body() }
    }
}

extension ManagedObjectContext {
    /// Runs synchronous work of this context for an async caller, on a thread of the store
    /// (``StoreRefinements/runBlocking(_:)``), while the calling task waits without holding a thread of the cooperative
    /// pool. The context is confined to the calling task, which is suspended until the work is done: the work
    /// and the task never use the context at once.
    ///
    /// - Throws: `CancellationError` when the task is cancelled before the work starts, or while it runs and
    ///   the store stops it (nothing is committed then); otherwise what `body` throws.
    nonisolated(nonsending) func performBlocking<T>(_ body: @escaping () throws -> T) async throws -> T {
        try await Self.performBlocking(on: refined, body)
    }

    /// Runs synchronous work on a thread of `store` for an async caller, as ``performBlocking(_:)`` does, for
    /// work that needs no context.
    nonisolated(nonsending) static func performBlocking<T>(
        on store: any StoreRefinements, _ body: @escaping () throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let token = CancellationToken()
        if store.runsBlockingWorkHere {
            // Already on one of the store's threads (a task that prefers its task executor): the work runs
            // here, without a handoff there and back.
            return try await withTaskCancellationHandler {
                try token.checkCancellation()
                return try token.makeCurrent { try body() }
            } onCancel: {
                token.cancel()
            }
        }
        let work = BlockingWork(body)
        let result: Handoff<T> = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                store.runBlocking {
                    // `run` lets go of `body` (and the context it captured) before the task resumes: were the
                    // store's thread the last holder, the context would deinit there while the task uses its
                    // objects.
                    let outcome = Result { try work.run(token) }
                    continuation.resume(with: outcome.map { Handoff(value: $0) })
                }
            }
        } onCancel: {
            token.cancel()
        }
        return result.value
    }

    /// `value` after `body` changed a copy of it on a thread of the store (see ``performBlocking(_:)``), with
    /// what `body` returned; the caller assigns the value back, so a failure leaves its value as it was.
    nonisolated(nonsending) func performMutating<Value, Result>(
        _ value: Value, _ body: @escaping (inout Value) throws -> Result
    ) async throws -> (value: Value, result: Result) {
        let original = Handoff(value: value)
        return try await performBlocking {
            var copy = original.value
            let result = try body(&copy)
            return (copy, result)
        }
    }

    /// Writes every pending change in one transaction, like ``save()``, without blocking a thread of the
    /// cooperative pool.
    ///
    /// - Throws: As ``save()``; `CancellationError` when the task was cancelled before the commit (nothing
    ///   is written then, and the changes stay pending).
    public nonisolated(nonsending) func save() async throws {
        try await performBlocking { try self.save() }
    }

    /// The objects matching a request, like ``fetch(_:)``, without blocking a thread of the cooperative pool.
    ///
    /// - Throws: As ``fetch(_:)``; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func fetch(_ request: FetchRequest) async throws -> [ManagedObject] {
        try await performBlocking { try self.fetch(request) }
    }

    /// The object with this ID, like ``existingObject(with:)``, without blocking a thread of the cooperative
    /// pool.
    ///
    /// - Throws: As ``existingObject(with:)``; `CancellationError` when the task was cancelled.
    public nonisolated(nonsending) func existingObject(with id: ManagedObjectID) async throws -> ManagedObject {
        try await performBlocking { try self.existingObject(with: id) }
    }
}
