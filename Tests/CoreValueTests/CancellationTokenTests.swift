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
}
