// A unit of work in one handoff: Core Data's `perform(_:)`, for a context whose store blocks on the network.
extension ManagedObjectContext {
    /// Runs `body`, synchronous work with this context (the struct API's `query`, `toObject`, `save` and the
    /// context's own calls), on one of the store's threads, as Core Data's `perform(_:)` runs a block on its
    /// context's queue, and returns what it returns.
    ///
    /// Each async call of the struct API hands its work to a store thread and the task back, one handoff each
    /// way per call; `perform` hands the whole body over once. A request that reads a struct, changes it and
    /// saves it in one `perform` waits for two handoffs instead of four (on two cores, 64 such tasks on a
    /// pool of 8 spent less CPU per operation than with the two async calls: BENCHMARKS.md). The calling task
    /// waits suspended, without holding a thread of the cooperative pool; a task that prefers the store's
    /// task executor runs `body` where it is.
    ///
    /// `body` holds a store thread, and one pooled connection at a time, for as long as it runs: keep it to the
    /// context's work, not waits on other things. It may use what the calling task holds (the context, values
    /// it captured): the task is suspended until `body` returned, so the two never run at once.
    ///
    /// ```swift
    /// let context = ManagedObjectContext(store: store)
    /// try await context.perform {
    ///     guard var account = try Account.query(context, predicate: .key("id") == id).first else { return }
    ///     account.balance += 1
    ///     try account.save(context)
    /// }
    /// ```
    ///
    /// - Throws: What `body` throws; `CancellationError` when the task was cancelled before `body` started, or
    ///   while it ran and a store call inside it stopped (nothing is committed by a save so stopped).
    public nonisolated(nonsending) func perform<T>(_ body: @escaping () throws -> T) async throws -> T {
        try await performBlocking(body)
    }
}
