@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Synchronization
import LibPQ
import Testing

/// History read while it is written: listeners across a lost connection, the async sequence, pruning under
/// a live reader.
@Suite struct HistoryListenerTests {
    /// A history listener hands out every save once, woken by notifications; after its notification
    /// connection is killed it still hands out what committed meanwhile, with no gap to report.
    @Test func aHistoryListenerMissesNothingAcrossALostConnection() throws {
        let channel = "cv_history_" + UUID().uuidString.prefix(8).lowercased()
        try HistoryTests.withHistoryStore(channel: channel) { store, url, _ in
            let listener = try store.makeHistoryListener(
                after: try store.currentHistoryToken(), pollInterval: .seconds(30))
            defer { listener.close() }
            #expect(try listener.next(timeout: .milliseconds(50)).isEmpty)
            var names: [String] = []
            func save(_ name: String) throws {
                var employee = Employee(name: name, age: 30, position: nil, department: "Ops", job: "Clerk")
                try employee.save(ManagedObjectContext(store: store))
            }
            try save("A")
            // Woken by the notification long before the 30 s poll.
            names += try listener.next(timeout: .seconds(10)).flatMap(\.changes).map(\.objectID.description)
            #expect(names.count == 1)
            try TestDatabase.execute(
                url,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE strpos(query, '\(channel)') > 0 "
                    + "AND pid <> pg_backend_pid()")
            try save("B")
            try save("C")
            var read: [HistoryTransaction] = []
            for _ in 0..<20 where read.count < 2 { read += try listener.next(timeout: .seconds(1)) }
            #expect(read.count == 2)
            #expect(try listener.next(timeout: .milliseconds(50)).isEmpty)
            #expect(listener.token == read.last?.token)
        }
    }

    /// The async form: a sequence of transactions as they commit, ending when its task is cancelled; without
    /// a channel the listener polls.
    @Test func historyTransactionsAsAnAsyncSequence() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try await TestSchema.withEmpty { schema in
            try await Migrator(url: schema.url, schema: schema.name).migrate(
                model: ExampleModel.model, recordsHistory: true)
            let store = try PostgresStore(
                model: ExampleModel.model,
                configuration: try .init(url: schema.url, schema: schema.name).with { $0.recordsHistory = true })
            defer { store.close() }
            let listener = try store.makeHistoryListener(after: nil, pollInterval: .milliseconds(20))
            let reader = Task {
                var numbers: [Int64] = []
                for try await transaction in listener.transactions() {
                    numbers.append(transaction.transactionNumber)
                    if numbers.count == 5 { break }
                }
                return numbers
            }
            for index in 0..<5 {
                var employee = Employee(name: "E\(index)", age: 30, position: nil, department: "Ops", job: "Clerk")
                try await employee.save(ManagedObjectContext(store: store))
            }
            let numbers = try await reader.value
            #expect(numbers.count == 5 && numbers == numbers.sorted())
            // A cancelled task ends its sequence.
            let quiet = try store.makeHistoryListener(after: await store.currentHistoryToken())
            let idle = Task {
                var count = 0
                for try await _ in quiet.transactions() {
                    count += 1
                }
                return count
            }
            idle.cancel()
            #expect(try await idle.value == 0)
        }
    }

    /// Pruning while a reader reads: pruned up to the reader's own token, the reader sees every save once;
    /// pruned by date faster than it reads, it is told `historyExpired`, never handed a page with a gap
    /// inside it, and reads on from a new token.
    @Test func pruningUnderALiveReaderNeverLeavesAGap() throws {
        try HistoryTests.withHistoryStore { store, _, _ in
            let writers = 2
            let perWriter = 150
            let done = DispatchGroup()
            let failure = Mutex<(any Error)?>(nil)
            for writer in 0..<writers {
                done.enter()
                Thread {
                    defer { done.leave() }
                    do {
                        for index in 0..<perWriter {
                            var employee = Employee(
                                name: "w\(writer)-\(index)", age: 30, position: nil, department: "Ops", job: "Clerk")
                            try employee.save(ManagedObjectContext(store: store))
                        }
                    } catch {
                        failure.withLock { $0 = error }
                    }
                }.start()
            }
            // The reader publishes its token after handling each page; the pruner never goes past it.
            let published = Mutex<HistoryToken?>(nil)
            let writing = Mutex(true)
            let prunerDone = DispatchSemaphore(value: 0)
            let pruner = Thread {
                while writing.withLock({ $0 }) {
                    if let token = published.withLock({ $0 }) { _ = try? store.deleteHistory(before: token) }
                    Thread.sleep(forTimeInterval: 0.005)
                }
                prunerDone.signal()
            }
            pruner.start()
            var seen: [ManagedObjectID] = []
            var token: HistoryToken?
            var finished = false
            while !finished {
                finished = done.wait(timeout: .now()) == .success
                while true {
                    let page = try store.history(after: token, limit: 25)
                    seen += page.flatMap(\.changes).map(\.objectID)
                    token = page.last?.token ?? token
                    published.withLock { $0 = token }
                    if page.count < 25 { break }
                }
            }
            writing.withLock { $0 = false }
            prunerDone.wait()
            #expect(failure.withLock { $0 } == nil)
            #expect(seen.count == writers * perWriter)
            #expect(Set(seen).count == seen.count)

            // By date, faster than the reader: expired, then on from a new token.
            let stale = try store.currentHistoryToken()
            var employee = Employee(name: "late", age: 30, position: nil, department: "Ops", job: "Clerk")
            try employee.save(ManagedObjectContext(store: store))
            #expect(try store.deleteHistory(olderThan: Date().addingTimeInterval(60)) >= 1)
            #expect {
                _ = try store.history(after: stale, limit: 10)
            } throws: { ($0 as? CVManagedStructError)?.code == .historyExpired }
            let fresh = try store.currentHistoryToken()
            employee.age = 31
            try employee.save(ManagedObjectContext(store: store))
            #expect(try store.history(after: fresh, limit: 10).map { $0.changes.map(\.kind) } == [[.update]])
        }
    }
}
