/// The work of one `performBlocking` call, run once on the store's thread and released as soon as it ran.
///
/// Not generic, nor is what it hands back (the result as `Any`, cast back once by the task): every generic
/// type an async call touched (this box, its result, the continuation) cost a lookup in the runtime's
/// metadata cache per call, nine per call in all, about 3,000 instructions (BENCHMARKS.md, twelfth round).
private final class BlockingWork: @unchecked Sendable {
    // @unchecked: `body` is touched by the store's thread only, while the task that made it is suspended.
    private var body: (() throws -> Any)?

    init(_ body: @escaping () throws -> Any) { self.body = body }

    func run(_ token: CancellationToken) -> Result<BlockingOutcome, any Error> {
        guard let body else { return .failure(CancellationError()) }
        self.body = nil
        return Result {
            try token.checkCancellation()
            return BlockingOutcome(value: try token.makeCurrent { try body() })
        }
    }
}

/// What the store's thread hands back to the suspended task.
private struct BlockingOutcome: @unchecked Sendable {
    // @unchecked: the value is handed over once, from the store's thread to the task that waited for it, and
    // never touched by that thread again (the work's own result, which the context's confinement covers).
    let value: Any
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
        let work = BlockingWork { try body() }
        let outcome = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<BlockingOutcome, any Error>) in
                store.runBlocking {
                    // `run` lets go of `body` (and the context it captured) before the task resumes: were the
                    // store's thread the last holder, the context would deinit there while the task uses its
                    // objects.
                    continuation.resume(with: work.run(token))
                }
            }
        } onCancel: {
            token.cancel()
        }
        // `body` returned a `T`, so the cast cannot fail.
        guard let value = outcome.value as? T else {
            throw CVManagedStructError(
                .typeMismatch, message: "an async call's work returned \(type(of: outcome.value)), not \(T.self)")
        }
        return value
    }

    /// `value` after `body` changed a copy of it on a thread of the store (see ``performBlocking(_:)``), with
    /// what `body` returned; the caller assigns the value back, so a failure leaves its value as it was.
    nonisolated(nonsending) func performMutating<Value, Result>(
        _ value: Value, _ body: @escaping (inout Value) throws -> Result
    ) async throws -> (value: Value, result: Result) {
        return try await performBlocking {
            var copy = value
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
