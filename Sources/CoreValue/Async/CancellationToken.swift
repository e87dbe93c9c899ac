import Foundation

/// The cancellation state of one async call, for the store that runs its blocking work.
///
/// An async call of this library (`try await context.save()`, say) runs its synchronous work through
/// ``StoreRefinements/runBlocking(_:)`` with a token that is ``current`` on the thread doing the work. When the calling
/// task is cancelled the token is cancelled: work not yet started throws `CancellationError`, and a store
/// cancels the statement it is running through a handler registered with ``whileRunning(onCancel:_:)``
/// (`PostgresStore` sends the server a cancel request).
@_spi(StoreImplementation) public final class CancellationToken: @unchecked Sendable {
    // @unchecked: every mutable field is read and written under `lock`.
    private var cancelled = false
    /// The handler registered first and still registered, kept apart from `more`: an async call registers
    /// one at a time (a store's, around its statement), so the table stays empty and is never allocated.
    private var first: Handler?
    private var more: [Int: Handler] = [:]
    private var lastHandler = 0
    /// Handlers that `cancel()` is running now.
    private var running = Set<Int>()

    private struct Handler {
        let id: Int
        let run: @Sendable () -> Void
        /// Whether `run` blocks, so that it runs on a thread of its own (see ``whileRunning(onCancelBlocking:_:)``).
        let blocks: Bool
    }

    /// The locks tokens share, one chosen per token by its address. A lock of its own (an `NSCondition`, which
    /// allocates its mutex and condition) cost each async call three allocations; the tokens' critical
    /// sections are a few loads and stores, and a token waits on its lock only while a cancel handler runs.
    private static let locks = (0..<16).map { _ in NSCondition() }

    /// This token's lock, picked by its address: objects are 16-byte aligned and tokens made one after another
    /// sit 96 bytes apart, so bits above the fourth are mixed in as well (alone, they reached 8 of the 16).
    private var lock: NSCondition {
        let address = UInt(bitPattern: ObjectIdentifier(self))
        return Self.locks[Int((address >> 4 ^ address >> 8 ^ address >> 12) & 15)]
    }

    /// A token that is not cancelled.
    public init() {}

    /// Whether the call was cancelled.
    public var isCancelled: Bool { lock.withLock { cancelled } }

    /// Cancels the call: runs every registered handler once. Cancelling twice does nothing more.
    public func cancel() {
        let pending: [Handler] = lock.withLock {
            guard !cancelled else { return [] }
            cancelled = true
            var pending = Array(more.values)
            if let first { pending.append(first) }
            first = nil
            more.removeAll()
            running.formUnion(pending.map(\.id))
            return pending
        }
        for handler in pending { start(handler) }
    }

    /// Runs `handler` (registered and marked running), here or on a thread of its own, then marks it done.
    private func start(_ handler: Handler) {
        let finish: @Sendable () -> Void = { [self] in
            handler.run()
            lock.withLock {
                running.remove(handler.id)
                lock.broadcast()
            }
        }
        guard handler.blocks else { return finish() }
        let thread = Thread(block: finish)
        thread.name = "CoreValue cancel"
        thread.start()
    }

    /// Runs `body`; a cancellation while it runs calls `onCancel` (at once, before `body`, when the token is
    /// already cancelled). `onCancel` may run on any thread; when it is running as `body` ends, this waits for
    /// it to finish (a store cancelling a statement must not let the connection go before the request is
    /// sent).
    public func whileRunning<T>(onCancel: @escaping @Sendable () -> Void, _ body: () throws -> T) rethrows -> T {
        try whileRunning(onCancel, blocks: false, body)
    }

    /// ``whileRunning(onCancel:_:)`` for a handler that blocks (a cancel request sent to a server, which
    /// connects to it and waits for its answer): it runs on a thread of its own, never on the thread that
    /// cancels (often one of Swift's cooperative pool); `body`'s end waits for it as well. On a token already
    /// cancelled the handler is started before `body` and runs beside it (a store checks the token before each
    /// statement, so such a body sends none).
    public func whileRunning<T>(onCancelBlocking: @escaping @Sendable () -> Void, _ body: () throws -> T) rethrows
        -> T
    {
        try whileRunning(onCancelBlocking, blocks: true, body)
    }

    private func whileRunning<T>(
        _ onCancel: @escaping @Sendable () -> Void, blocks: Bool, _ body: () throws -> T
    ) rethrows -> T {
        let (handler, registered): (Handler, Bool) = lock.withLock {
            lastHandler += 1
            let handler = Handler(id: lastHandler, run: onCancel, blocks: blocks)
            if cancelled {
                running.insert(handler.id)
                return (handler, false)
            }
            if first == nil { first = handler } else { more[handler.id] = handler }
            return (handler, true)
        }
        if !registered { start(handler) }
        defer {
            lock.withLock {
                if first?.id == handler.id { first = nil } else if !more.isEmpty { more[handler.id] = nil }
                while running.contains(handler.id) { lock.wait() }
            }
        }
        return try body()
    }

    /// Throws `CancellationError` when the call was cancelled: a store calls this before each statement.
    public func checkCancellation() throws {
        if isCancelled { throw CancellationError() }
    }

    /// The token of the async call whose blocking work this thread is running; `nil` for a synchronous call.
    public static var current: CancellationToken? { currentSlot.object }

    /// Runs `body` with this token as ``current`` on this thread.
    package func makeCurrent<T>(_ body: () throws -> T) rethrows -> T {
        // Without a thread-local slot (the process ran out of keys) calls still work; they just can't stop a
        // running statement.
        try Self.currentSlot.withObject(self, body)
    }

    /// Where ``current`` is kept.
    private static let currentSlot = ThreadSlot<CancellationToken>()
}
