@_spi(StoreImplementation) import CoreValue

// The store's threads: where async calls do their blocking work (`BlockingExecutor`), and the task executor a
// request's task may prefer so that its calls need no handoff there.
extension PostgresStore {
    /// Runs the blocking work of an async call on one of the store's threads (as many as its pool has
    /// connections), never on the caller's: no thread of Swift's cooperative pool waits on the server.
    @_spi(StoreImplementation) public func runBlocking(_ work: @escaping @Sendable () -> Void) {
        executor.submit(work)
    }

    /// Whether the calling thread is one of the store's (``taskExecutor``'s).
    @_spi(StoreImplementation) public var runsBlockingWorkHere: Bool { executor.isCurrent }

    /// The store's threads as a task executor: a task that prefers it (`Task(executorPreference:)`,
    /// `withTaskExecutorPreference(_:operation:)`, a task group's `addTask(executorPreference:)`) runs on
    /// them, and its async calls on this store do their blocking work where the task already is, without
    /// the handoff to a store thread and back that each call otherwise takes (see the Concurrency article).
    ///
    /// The threads are the ones that run every async call's blocking work (as many as ``Configuration/poolSize``):
    /// a task running there holds one while it runs, also while it waits on the network, so keep CPU-heavy
    /// or long-waiting work that does not use the store on other executors.
    public var taskExecutor: any TaskExecutor { executor }
}
