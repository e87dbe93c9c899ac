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

    @Test func aCancelWhileRunningCallsTheHandlerOnceAndOneRegisteredLaterAtOnce() {
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
        // The body has ended and the handler is still blocked; let it finish only now. (A handler run inline by
        // `cancel()` would block the body: the first wait then times out and the test fails, without hanging.)
        #expect(bodyEnded.wait(timeout: .now() + 30) == .success)
        release.signal()
        #expect(runnerEnded.wait(timeout: .now() + 30) == .success)
        // `whileRunning` returned after the handler had run, not when its body ended.
        #expect(callsWhenRunnerEnded.value == 1)
        #expect(calls.value == 1)
        #expect(calls.lastThread !== runner)
    }

    /// Tokens share their locks: many tokens on several threads, each cancelled from another thread at one of
    /// four moments (before its handler is registered, while its body runs, as its body returns, never), run
    /// each handler at most once, never after `whileRunning` returned, and nothing hangs.
    @Test func manyTokensCancelledAcrossThreadsRunEachHandlerOnceAndNeverLate() {
        enum Moment: CaseIterable { case before, during, asItEnds, never }
        final class Record: @unchecked Sendable {
            // @unchecked: `atReturn` is written by the worker before `done` is signalled and read after.
            let token = CancellationToken()
            let calls = Calls()
            let moment: Moment
            /// The canceller's go-ahead to the worker (`before`: registration may start; `during`: the body may
            /// end), and the worker's to the canceller (the body has started).
            let toWorker = DispatchSemaphore(value: 0)
            let toCanceller = DispatchSemaphore(value: 0)
            var atReturn = -1
            var waitedTooLong = false
            init(_ moment: Moment) { self.moment = moment }
            func wait(_ semaphore: DispatchSemaphore) {
                if semaphore.wait(timeout: .now() + 30) == .timedOut { waitedTooLong = true }
            }
        }
        let workers = 4
        let perWorker = 200
        let records = (0..<(workers * perWorker)).map { Record(Moment.allCases[$0 % Moment.allCases.count]) }
        let done = DispatchGroup()
        for worker in 0..<workers {
            done.enter()
            Thread {
                for index in stride(from: worker, to: records.count, by: workers) {
                    let record = records[index]
                    if record.moment == .before { record.wait(record.toWorker) }
                    let handler: @Sendable () -> Void = { record.calls.record() }
                    let body = {
                        record.toCanceller.signal()
                        if record.moment == .during { record.wait(record.toWorker) }
                    }
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
        // One canceller, in order: each worker waits only on its own current record, so none waits forever.
        done.enter()
        Thread {
            for record in records {
                switch record.moment {
                case .before:
                    record.token.cancel()
                    record.toWorker.signal()
                    record.wait(record.toCanceller)
                case .during:
                    record.wait(record.toCanceller)
                    record.token.cancel()
                    record.toWorker.signal()
                case .asItEnds:
                    record.wait(record.toCanceller)
                    record.token.cancel()
                case .never:
                    record.wait(record.toCanceller)
                }
            }
            done.leave()
        }.start()
        #expect(done.wait(timeout: .now() + 120) == .success)
        for record in records {
            #expect(!record.waitedTooLong)
            // At most one call, and none after the body's end.
            #expect(record.calls.value <= 1)
            #expect(record.calls.value == record.atReturn)
            switch record.moment {
            case .before, .during: #expect(record.atReturn == 1)
            case .asItEnds: break  // before or after the unregistering: either is right
            case .never: #expect(record.atReturn == 0)
            }
        }
    }
}
