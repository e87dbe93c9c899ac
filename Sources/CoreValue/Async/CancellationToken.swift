import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The cancellation state of one async call, for the store that runs its blocking work.
///
/// An async call of this library (`try await context.save()`, say) runs its synchronous work through
/// ``StoreRefinements/runBlocking(_:)`` with a token that is ``current`` on the thread doing the work. When the calling
/// task is cancelled the token is cancelled: work not yet started throws `CancellationError`, and a store
/// cancels the statement it is running through a handler registered with ``whileRunning(onCancel:_:)``
/// (`PostgresStore` sends the server a cancel request).
@_spi(StoreImplementation) public final class CancellationToken: @unchecked Sendable {
    // @unchecked: every mutable field is read and written under `lock`.
    private let lock = NSCondition()
    private var cancelled = false
    private var handlers: [Int: @Sendable () -> Void] = [:]
    private var lastHandler = 0
    /// Handlers that `cancel()` is running now.
    private var running = Set<Int>()

    /// A token that is not cancelled.
    public init() {}

    /// Whether the call was cancelled.
    public var isCancelled: Bool { lock.withLock { cancelled } }

    /// Cancels the call: runs every registered handler once. Cancelling twice does nothing more.
    public func cancel() {
        let pending: [Int: @Sendable () -> Void] = lock.withLock {
            guard !cancelled else { return [:] }
            cancelled = true
            defer { handlers.removeAll() }
            running = Set(handlers.keys)
            return handlers
        }
        for (id, handler) in pending {
            handler()
            lock.withLock {
                running.remove(id)
                lock.broadcast()
            }
        }
    }

    /// Runs `body`; a cancellation while it runs calls `onCancel` (at once, before `body`, when the token is
    /// already cancelled). `onCancel` may run on any thread; when it is running as `body` ends, this waits for
    /// it to finish (a store cancelling a statement must not let the connection go before the request is
    /// sent).
    public func whileRunning<T>(onCancel: @escaping @Sendable () -> Void, _ body: () throws -> T) rethrows -> T {
        let registered: Int? = lock.withLock {
            guard !cancelled else { return nil }
            lastHandler += 1
            handlers[lastHandler] = onCancel
            return lastHandler
        }
        if registered == nil { onCancel() }
        defer {
            if let registered {
                lock.withLock {
                    handlers[registered] = nil
                    while running.contains(registered) { lock.wait() }
                }
            }
        }
        return try body()
    }

    /// Throws `CancellationError` when the call was cancelled: a store calls this before each statement.
    public func checkCancellation() throws {
        if isCancelled { throw CancellationError() }
    }

    /// The token of the async call whose blocking work this thread is running; `nil` for a synchronous call.
    public static var current: CancellationToken? {
        guard let currentTokenKey, let pointer = pthread_getspecific(currentTokenKey) else { return nil }
        return Unmanaged<CancellationToken>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `body` with this token as ``current`` on this thread.
    package func makeCurrent<T>(_ body: () throws -> T) rethrows -> T {
        // Without a thread-local slot (the process ran out of keys) calls still work; they just can't stop a
        // running statement.
        guard let currentTokenKey else { return try body() }
        let previous = pthread_getspecific(currentTokenKey)
        pthread_setspecific(currentTokenKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(currentTokenKey, previous) }
        // `self` outlives `body` (the caller holds it), so the unretained pointer stays valid.
        return try withExtendedLifetime(self) { try body() }
    }
}

/// The thread-local slot of ``CancellationToken/current`` (created once, never deleted); `nil` if the
/// process has no key left.
private let currentTokenKey: pthread_key_t? = {
    var key = pthread_key_t()
    return pthread_key_create(&key, nil) == 0 ? key : nil
}()
