import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// An async query cancelled while its rows are being unboxed throws `CancellationError` instead of
/// unboxing every row first (found by an outside review: 100,000 rows came back from a cancelled task).
@Suite struct CancelledUnboxingTests {
    struct Row: CVManagedUniqueStruct {
        static let EntityName = "Row"
        static let IdentifierName = "id"
        var id: Int64
        var name: String
        func IdentifierValue() -> IdentifierType { id }
        static func fromObject(_ o: ManagedObject) throws -> Row {
            Gate.shared.arrive()
            return try curry(self.init) <^> o <| "id" <^> o <| "name"
        }
    }

    /// Holds the first row's unboxing until the test has cancelled the task; counts the rows unboxed.
    final class Gate: @unchecked Sendable {
        // @unchecked: `count` is read and written under `lock`; the semaphores are thread-safe.
        static let shared = Gate()
        private let lock = NSLock()
        private var count = 0
        let firstRow = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)

        func arrive() {
            let first = lock.withLock {
                count += 1
                return count == 1
            }
            if first {
                firstRow.signal()
                proceed.wait()
            }
        }

        var unboxed: Int { lock.withLock { count } }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity("Row", attributes: [Attribute("id", .int64, unique: true), Attribute("name", .string)])
        ])
    }

    @Test func aQueryCancelledWhileItUnboxesStopsThere() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try await TestSchema.with(model: try Self.model()) { schema in
            let rows = (1...5_000).map { Row(id: Int64($0), name: "row \($0)") }
            try await rows.saveAll(ManagedObjectContext(store: schema.store))
            let store = schema.store
            let task = Task { () async throws -> [Row] in
                try await Row.query(ManagedObjectContext(store: store), predicate: nil)
            }
            // Waited for off the cooperative pool: the first row's unboxing holds a store thread.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                Thread {
                    Gate.shared.firstRow.wait()
                    done.resume()
                }.start()
            }
            task.cancel()
            Gate.shared.proceed.signal()
            let result = await task.result
            // Only whether it threw CancellationError: a failure would otherwise print every row returned.
            let threwCancellation: Bool
            do {
                _ = try result.get()
                threwCancellation = false
            } catch {
                threwCancellation = error is CancellationError
            }
            #expect(threwCancellation)
            #expect(Gate.shared.unboxed < 5_000, "\(Gate.shared.unboxed) rows unboxed")
            // The store goes on working.
            let all: [Row] = try await Row.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(all.count == 5_000)
        }
    }
}
