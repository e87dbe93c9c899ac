import Foundation
import CoreValue

/// The threads of a store that run the blocking work of async calls (libpq's calls block until the server
/// answers), so that no thread of Swift's cooperative pool ever waits on the network.
///
/// As many threads as the store has pooled connections, started on first use: each piece of work holds at
/// most one connection at a time, so a thread never waits for a connection another queued piece of work
/// would free. Work runs in the order it was submitted. The threads end when the store is freed.
///
/// It is also the store's task executor (``PostgresStore/taskExecutor``): the jobs of tasks that prefer it
/// queue with the blocking work, and such a task's async calls run their blocking work inline, one call at a
/// time (a job never suspends inside one), so the rule above holds for them too.
final class BlockingExecutor: @unchecked Sendable {
    // @unchecked: `queue`, `head`, `started` and `isStopping` are read and written under `condition`.
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []
    private var head = 0
    private var started = 0
    private var isStopping = false
    private let threadCount: Int
    private let name: String

    /// Marks a thread as one of an executor's (``isCurrent``); the executor outlives its threads' work.
    fileprivate static let threadSlot = ThreadSlot<BlockingExecutor>()

    /// Stack size of each thread: deep struct graphs are walked iteratively, but boxing and unboxing a
    /// nested value recurse a little per level.
    static let stackSize = 4 << 20

    init(threadCount: Int, name: String) {
        self.threadCount = max(1, threadCount)
        self.name = name
    }

    /// Queues `work` for the next free thread (starting one when fewer than `threadCount` run).
    func submit(_ work: @escaping @Sendable () -> Void) {
        _ = submit(work, unlessStopping: false)
    }

    /// ``submit(_:)``; with `unlessStopping`, refuses (returns `false`) once ``stop()`` was called.
    private func submit(_ work: @escaping @Sendable () -> Void, unlessStopping: Bool) -> Bool {
        condition.lock()
        if unlessStopping && isStopping {
            condition.unlock()
            return false
        }
        queue.append(work)
        let waiting = queue.count - head
        // More queued work than idle threads to take it: one more thread, up to `threadCount`.
        let startThread = !isStopping && started < threadCount && waiting > idle
        if startThread { started += 1 }
        let number = started
        let wakes = idle > 0
        condition.unlock()
        // After the lock is released: a thread woken while it was held would wait for it again at once (a
        // futex call and a context switch more per handoff); it rechecks the queue under the lock anyway.
        if wakes { condition.signal() }
        if startThread { start(number: number) }
        return true
    }

    /// Threads waiting for work (read under `condition`).
    private var idle = 0

    private func start(number: Int) {
        let thread = Thread { [self] in run() }
        thread.name = "\(name) \(number)"
        thread.stackSize = Self.stackSize
        thread.start()
    }

    private func run() {
        Self.threadSlot.setForThisThread(self)
        while true {
            condition.lock()
            while head == queue.count && !isStopping {
                idle += 1
                condition.wait()
                idle -= 1
            }
            if head == queue.count {
                // Stopping and nothing left to do.
                condition.unlock()
                return
            }
            let work = queue[head]
            head += 1
            if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            work()
        }
    }

    /// Lets the threads finish the queued work and end.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
    }
}

extension BlockingExecutor: TaskExecutor {
    /// Whether the calling thread is one of this executor's.
    var isCurrent: Bool { Self.threadSlot.holds(self) }

    /// Runs a job of a task that prefers this executor (``PostgresStore/taskExecutor``) on one of its threads,
    /// in turn with the blocking work. Once the store is gone and its threads have ended, on Swift's global
    /// concurrent executor instead, so that such a task still runs to its end.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = submit({ [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }, unlessStopping: true)
        if !accepted { globalConcurrentExecutor.enqueue(job) }
    }
}
