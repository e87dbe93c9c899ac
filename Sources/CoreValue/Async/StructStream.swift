import Foundation

extension BoxingStruct {
    /// The structs of type `T` whose stored rows match a predicate, sorted, handed to `body` in batches of at
    /// most `batchSize`, in constant memory whatever the number of rows.
    ///
    /// Each batch is read, registered in a context of its own and unboxed; the context is released before
    /// the next batch, so memory holds about one batch. The stream reads what is stored: it has no context,
    /// so no unsaved changes are included. `PostgresStore` reads through a cursor in one read-only
    /// transaction (one snapshot for the whole stream) and holds one pooled connection until it ends. Throw
    /// from `body` to stop early.
    ///
    /// ```swift
    /// try Employee.stream(store, predicate: .key("active") == true, sortDescriptors: [.init(key: "id")]) {
    ///     (batch: [Employee]) in try export(batch)
    /// }
    /// ```
    ///
    /// - Throws: As ``query(_:predicate:sortDescriptors:)``, and what `body` throws.
    public static func stream<T: UnboxingStruct>(
        _ store: any Store,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        batchSize: Int = 1000,
        _ body: ([T]) throws -> Void
    ) throws where T.StructureType == T {
        let request = FetchRequest(
            entityName: EntityName, predicate: predicate, sortDescriptors: sortDescriptors ?? [])
        try StructBatches.read(store, request, batchSize, body)
    }

    /// The structs of type `T` whose stored rows match a predicate, sorted, as an `AsyncSequence`, read in
    /// batches of `batchSize` while the sequence is iterated.
    ///
    /// ```swift
    /// for try await employee in Employee.stream(store, predicate: nil) as StructStream<Employee> { ... }
    /// ```
    ///
    /// Memory holds about two batches whatever the number of rows: the store reads the next batch only when
    /// the consumer has taken the previous one. The read runs on a thread of the stream's own (never one of the
    /// cooperative pool). Leaving the loop early, or cancelling the task, ends the
    /// store's read (its transaction is rolled back and its connection returned). What the stream reads is
    /// described in ``stream(_:predicate:sortDescriptors:batchSize:_:)``.
    public static func stream<T: UnboxingStruct & Sendable>(
        _ store: any Store,
        predicate: CVPredicate?,
        sortDescriptors: [CVSortDescriptor]? = nil,
        batchSize: Int = 1000
    ) -> StructStream<T> where T.StructureType == T {
        let request = FetchRequest(
            entityName: EntityName, predicate: predicate, sortDescriptors: sortDescriptors ?? [])
        return StructStream { channel in
            // A thread of the stream's own, not `runBlocking`: the reader blocks between batches until the
            // consumer asks for more, which must never hold a thread the consumer may need (a store that runs
            // work inline would deadlock, a pooled store thread would sit idle). The channel's token cancels
            // the statement running when the consumer goes away.
            let thread = Thread {
                channel.token.makeCurrent {
                    do {
                        try StructBatches.read(store, request, batchSize) { (batch: [T]) in
                            guard channel.put(batch) else { throw CancellationError() }
                        }
                        channel.finish(nil)
                    } catch {
                        channel.finish(error)
                    }
                }
            }
            thread.name = "CoreValue stream"
            thread.stackSize = 4 << 20
            thread.start()
        }
    }
}

/// Reads structs batch by batch, each batch unboxed from a context of its own.
enum StructBatches {
    static func read<T: UnboxingStruct>(
        _ store: any Store, _ request: FetchRequest, _ batchSize: Int, _ body: ([T]) throws -> Void
    ) throws where T.StructureType == T {
        try store.fetch(request, batchSize: batchSize) { snapshots in
            let context = ManagedObjectContext(store: store)
            let structs = try snapshots.map { try T.unbox(.object(try context.register($0))) }
            try body(structs)
            return true
        }
    }
}

/// Structs read from a store in batches, as an `AsyncSequence` (see
/// ``BoxingStruct/stream(_:predicate:sortDescriptors:batchSize:)``). Iterate it once.
public struct StructStream<Element: Sendable>: AsyncSequence, Sendable {
    let start: @Sendable (StreamChannel<Element>) -> Void

    /// Starts the store's read when iteration starts.
    public func makeAsyncIterator() -> Iterator {
        let channel = StreamChannel<Element>()
        start(channel)
        return Iterator(consumer: StreamConsumer(channel: channel))
    }

    /// Hands out one struct at a time, asking the store for the next batch when a batch is used up.
    public struct Iterator: AsyncIteratorProtocol {
        let consumer: StreamConsumer<Element>
        var batch: [Element] = []
        var position = 0

        /// The next struct, or `nil` after the last.
        ///
        /// - Throws: The store's or unboxing error; `CancellationError` when the task was cancelled.
        public mutating func next() async throws -> Element? {
            while position == batch.count {
                guard let next = try await consumer.channel.take() else { return nil }
                batch = next
                position = 0
            }
            defer { position += 1 }
            return batch[position]
        }
    }
}

/// Ends the store's read when the iterator is dropped (a `break` out of the loop).
final class StreamConsumer<Element: Sendable>: Sendable {
    let channel: StreamChannel<Element>
    init(channel: StreamChannel<Element>) { self.channel = channel }
    deinit { channel.cancel() }
}

/// A hand-over of one batch at a time from the store's thread (which blocks in ``put(_:)``) to the consuming
/// task (which suspends in ``take()``).
final class StreamChannel<Element: Sendable>: @unchecked Sendable {
    // @unchecked: every mutable field is read and written under `condition`.
    private let condition = NSCondition()
    private var pending: [Element]?
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    /// Whether the producer is parked in ``put(_:)`` (then its connection is idle, and cancelling it needs
    /// no cancel request to the server).
    private var producerWaiting = false
    private var waiter: CheckedContinuation<[Element]?, any Error>?
    /// Cancelled with the channel: stops the statement the reader is running.
    let token = CancellationToken()

    /// Hands over a batch and waits until the consumer took it; `false` when the consumer is gone.
    func put(_ batch: [Element]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !cancelled else { return false }
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: batch)
        } else {
            pending = batch
        }
        // Wait until it was taken, so that at most this batch and the consumer's current one are in memory.
        producerWaiting = true
        while pending != nil && !cancelled { condition.wait() }
        producerWaiting = false
        return !cancelled
    }

    /// Ends the stream, with the error that ended it, if any.
    func finish(_ error: (any Error)?) {
        condition.lock()
        defer { condition.unlock() }
        ended = true
        failure = failure ?? error
        if let waiter {
            self.waiter = nil
            if let failure = failure, !cancelled {
                waiter.resume(throwing: failure)
            } else {
                waiter.resume(returning: nil)
            }
        }
    }

    /// Stops the producer: its next (or current) ``put(_:)`` returns `false`.
    func cancel() {
        condition.lock()
        let wasCancelled = cancelled
        cancelled = true
        pending = nil
        let waiter = self.waiter
        self.waiter = nil
        // A producer parked between batches just wakes up and ends (rolling back); only one that is reading
        // needs its statement cancelled on the server.
        let interrupt = !wasCancelled && !ended && !producerWaiting
        condition.broadcast()
        condition.unlock()
        waiter?.resume(throwing: CancellationError())
        if interrupt { token.cancel() }
    }

    /// The next batch, or `nil` at the end.
    func take() async throws -> [Element]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                condition.lock()
                defer { condition.unlock() }
                if let batch = pending {
                    pending = nil
                    condition.broadcast()
                    continuation.resume(returning: batch)
                } else if cancelled {
                    continuation.resume(throwing: CancellationError())
                } else if ended {
                    if let failure {
                        continuation.resume(throwing: failure)
                    } else {
                        continuation.resume(returning: nil)
                    }
                } else if waiter != nil {
                    // Two iterators of one stream reading at once: refuse the second rather than lose one.
                    continuation.resume(
                        throwing: CVManagedStructError.invalidObject(
                            message: "a StructStream is iterated by two tasks at once; iterate it once"))
                } else {
                    waiter = continuation
                }
            }
        } onCancel: {
            cancel()
        }
    }
}
