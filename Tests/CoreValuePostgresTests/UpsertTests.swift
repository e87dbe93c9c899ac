import CoreValue
import CoreValuePostgres
import Foundation
import Testing

@Suite struct UpsertTests {
    static func author(_ id: String, _ name: String) -> ObjectChange {
        ObjectChange(
            id: .temporary("Author"), attributes: ["id": .string(id), "name": .string(name)], upsertKey: "id")
    }

    @Test func twoAppliesWithTheSameIdentifierShareOneRow() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let first = Self.author("a-1", "First")
            let second = Self.author("a-1", "Second")
            let one = try store.apply(ChangeSet(inserts: [first]))
            let two = try store.apply(ChangeSet(inserts: [second]))
            let id = try #require(one.permanentIDs[first.id])
            #expect(two.permanentIDs[second.id] == id)
            #expect(two.versions[id] == 2)
            let rows = try store.fetch(FetchRequest(entityName: "Author"))
            #expect(rows.count == 1)
            #expect(rows.first?.attributes["name"] == .string("Second"))
        }
    }

    @Test func duplicatesInOneBatchShareARowAndTheLastValuesWin() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let batch = [Self.author("x", "x1"), Self.author("y", "y1"), Self.author("x", "x2")]
            let result = try store.apply(ChangeSet(inserts: batch))
            #expect(result.permanentIDs[batch[0].id] == result.permanentIDs[batch[2].id])
            #expect(result.permanentIDs[batch[0].id] != result.permanentIDs[batch[1].id])
            let rows = try store.fetch(
                FetchRequest(entityName: "Author", sortDescriptors: [CVSortDescriptor(key: "id")]))
            #expect(rows.map { $0.attributes["name"] } == [.string("x2"), .string("y1")])
            // The first occurrence keeps its position: "x" was inserted first.
            #expect(rows[0].id.primaryKey ?? 0 < rows[1].id.primaryKey ?? 0)
        }
    }

    @Test func concurrentUpsertsFromManyThreadsLeaveOneRowPerIdentifier() throws {
        try TestDatabase.withExampleStore(poolSize: 4) { store, _, _ in
            let errors = ErrorBox()
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                do {
                    for round in 0..<5 {
                        let uuid = UUID(uuidString: "00000000-0000-0000-0000-00000000000\(round)") ?? UUID()
                        _ = try store.apply(
                            ChangeSet(inserts: [
                                ObjectChange(
                                    id: .temporary("Category"),
                                    attributes: ["id": .uuid(uuid), "name": .string("w\(worker)")], upsertKey: "id")
                            ]))
                    }
                } catch {
                    errors.append(error)
                }
            }
            #expect(errors.all.isEmpty, "\(errors.all)")
            let count = try store.fetch(FetchRequest(entityName: "Category")).count
            #expect(count == 5)
        }
    }
}

/// Collects errors from concurrent workers.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [any Error] = []
    func append(_ error: any Error) {
        lock.lock()
        errors.append(error)
        lock.unlock()
    }
    var all: [any Error] {
        lock.lock()
        defer { lock.unlock() }
        return errors
    }
}
