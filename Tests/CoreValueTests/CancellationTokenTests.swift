import Foundation
import Testing

@_spi(StoreImplementation) import CoreValue

/// `CancellationToken`, the state a store's blocking work reads to stop an async call: its handlers run once,
/// a blocking one off the cancelling thread, and `whileRunning` never returns while its handler runs.
@Suite struct CancellationTokenTests {
    /// Counts calls across threads.
    final class Calls: @unchecked Sendable {
        // @unchecked: `count` and `threads` are read and written under `lock`.
        private let lock = NSLock()
        private var count = 0
        private var threads: [Thread] = []
        func record() {
            lock.withLock {
                count += 1
                threads.append(Thread.current)
            }
        }
        var value: Int { lock.withLock { count } }
        var lastThread: Thread? { lock.withLock { threads.last } }
    }

    @Test func aCancelWhileRunningCallsTheHandlerOnceAndLaterOnesNotAtAll() {
        let token = CancellationToken()
        let calls = Calls()
        token.whileRunning(onCancel: { calls.record() }) {
            #expect(!token.isCancelled)
            token.cancel()
            token.cancel()
            #expect(token.isCancelled)
        }
        #expect(calls.value == 1)
        // Registered after the cancel: called at once, before the body.
        var ranBody = false
        token.whileRunning(onCancel: { calls.record() }) {
            #expect(calls.value == 2)
            ranBody = true
        }
        #expect(ranBody)
        #expect(throws: CancellationError.self) { try token.checkCancellation() }
    }

    @Test func aHandlerThatEndedWithItsBodyIsNotCalled() {
        let token = CancellationToken()
        let calls = Calls()
        token.whileRunning(onCancel: { calls.record() }) {}
        token.cancel()
        #expect(calls.value == 0)
    }

    @Test func nestedHandlersAreEachCalledOnce() {
        let token = CancellationToken()
        let outer = Calls()
        let inner = Calls()
        let third = Calls()
        token.whileRunning(onCancel: { outer.record() }) {
            token.whileRunning(onCancel: { inner.record() }) {
                token.whileRunning(onCancel: { third.record() }) {
                    token.cancel()
                }
            }
        }
        #expect(outer.value == 1 && inner.value == 1 && third.value == 1)
    }

    @Test func aBlockingHandlerRunsOnAThreadOfItsOwnAndTheBodyWaitsForIt() {
        let token = CancellationToken()
        let calls = Calls()
        let bodyEnded = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let runnerEnded = DispatchSemaphore(value: 0)
        let callsWhenRunnerEnded = Calls()
        let runner = Thread {
            token.whileRunning(
                onCancelBlocking: {
                    release.wait()
                    calls.record()
                }
            ) {
                // `cancel()` returns while the handler blocks: it runs on a thread of its own.
                token.cancel()
                bodyEnded.signal()
            }
            for _ in 0..<calls.value { callsWhenRunnerEnded.record() }
            runnerEnded.signal()
        }
        runner.start()
        // The body has ended and the handler is still blocked; let it finish only now.
        bodyEnded.wait()
        release.signal()
        runnerEnded.wait()
        // `whileRunning` returned after the handler had run, not when its body ended.
        #expect(callsWhenRunnerEnded.value == 1)
        #expect(calls.value == 1)
        #expect(calls.lastThread !== runner)
    }

    /// Tokens share their locks: many tokens on several threads, cancelled from others while their bodies
    /// run, each handler runs at most once, never after `whileRunning` returned, and nothing hangs.
    @Test func manyTokensCancelledAcrossThreadsRunEachHandlerOnceAndNeverLate() {
        final class Record: @unchecked Sendable {
            // @unchecked: `atReturn` is written by the worker before `done` is signalled and read after.
            let token = CancellationToken()
            let calls = Calls()
            var atReturn = -1
        }
        let workers = 4
        let perWorker = 400
        let records = (0..<(workers * perWorker)).map { _ in Record() }
        let done = DispatchGroup()
        for worker in 0..<workers {
            done.enter()
            Thread {
                for index in stride(from: worker, to: records.count, by: workers) {
                    let record = records[index]
                    let handler: @Sendable () -> Void = { record.calls.record() }
                    let body = { for _ in 0..<(index % 7) * 50 { _ = record.token.isCancelled } }
                    if index % 2 == 0 {
                        record.token.whileRunning(onCancel: handler, body)
                    } else {
                        record.token.whileRunning(onCancelBlocking: handler, body)
                    }
                    record.atReturn = record.calls.value
                }
                done.leave()
            }.start()
        }
        // Two cancellers over every token, from both ends, while the workers run.
        for reversed in [false, true] {
            done.enter()
            Thread {
                for record in reversed ? records.reversed() : records where record.calls.value == 0 {
                    record.token.cancel()
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        for record in records {
            // Cancelled before, during or after its body: at most one call, and none after the body's end.
            #expect(record.calls.value <= 1)
            #expect(record.calls.value == record.atReturn)
            #expect(record.token.isCancelled)
        }
    }
}
