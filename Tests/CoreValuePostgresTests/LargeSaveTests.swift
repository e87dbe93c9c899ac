@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

/// Saves of more rows than one statement carries (`ManagedObjectContext.batchSize`, 10,000): one statement per
/// that many rows, in one transaction, with every row's key and version reported as for one statement.
@Suite struct LargeSaveTests {
    static let rows = ManagedObjectContext.batchSize * 2 + 1

    @Test func insertsOfManyRowsGoInStatementsOfAtMostTenThousand() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let inserts = (0..<Self.rows).map {
                ObjectChange(id: .temporary("Car"), attributes: StoreRoundTripTests.car($0, photo: nil))
            }
            let before = store.statistics
            let result = try store.apply(ChangeSet(inserts: inserts))
            let used = store.statistics.since(before)
            // Three inserts and the commit identifier.
            #expect(used.statements == 4)
            #expect(used.transactions == 1)
            let keys = inserts.compactMap { result.permanentIDs[$0.id]?.primaryKey }
            #expect(keys.count == Self.rows)
            // Input order is key order, across the statements too.
            #expect(keys == keys.sorted())
            #expect(Set(keys).count == Self.rows)
            let stored = try store.fetch(
                FetchRequest(entityName: "Car", sortDescriptors: [CVSortDescriptor(key: "mileage")]))
            #expect(stored.count == Self.rows)
            #expect(stored.last?.attributes["name"] == .string("Car \(Self.rows - 1)"))
        }
    }

    @Test func upsertsOfManyRowsKeepOneRowPerIdentifierAcrossStatements() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            // Identifiers in an order that is not their byte order, and one of them twice, far apart.
            var batch = (0..<Self.rows).reversed().map { UpsertTests.author("a\($0)", "first \($0)") }
            batch.append(UpsertTests.author("a7", "last"))
            let before = store.statistics
            let result = try store.apply(ChangeSet(inserts: batch))
            #expect(store.statistics.since(before).statements == 4)
            let ids = batch.compactMap { result.permanentIDs[$0.id] }
            #expect(ids.count == batch.count)
            #expect(Set(ids).count == Self.rows)
            #expect(result.permanentIDs[batch[Self.rows - 1 - 7].id] == result.permanentIDs[batch[Self.rows].id])
            #expect(ids.allSatisfy { result.versions[$0] == 1 })
            let seven = try store.fetch(
                FetchRequest(entityName: "Author", predicate: .comparison(key: "id", .equal, .string("a7"))))
            #expect(seven.map { $0.attributes["name"] } == [.string("last")])
            #expect(try store.fetch(FetchRequest(entityName: "Author")).count == Self.rows)

            // Again: every row exists now, so every one is updated, and its version moves to 2.
            let again = (0..<Self.rows).map { UpsertTests.author("a\($0)", "second \($0)") }
            let second = try store.apply(ChangeSet(inserts: again))
            #expect(again.allSatisfy { change in second.permanentIDs[change.id].flatMap { second.versions[$0] } == 2 })
            #expect(Set(again.compactMap { second.permanentIDs[$0.id] }) == Set(ids))
        }
    }

    @Test func twoLargeUpsertsOfTheSameRowsInOppositeOrdersDoNotDeadlock() throws {
        try TestDatabase.withExampleStore(poolSize: 2) { store, _, _ in
            let names = (0..<Self.rows).map { "a\($0)" }
            _ = try store.apply(ChangeSet(inserts: names.map { UpsertTests.author($0, "seed") }))
            let before = store.statistics
            let errors = ErrorBox()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                do {
                    for round in 0..<2 {
                        // Overlapping but different rows (the second writer skips every third), so that the
                        // two writers' statements split the rows at different identifiers.
                        let order =
                            worker == 0
                            ? names : names.enumerated().filter { $0.offset % 3 != 0 }.map(\.element).reversed()
                        _ = try store.apply(
                            ChangeSet(inserts: order.map { UpsertTests.author($0, "w\(worker) r\(round)") }))
                    }
                } catch {
                    errors.append(error)
                }
            }
            #expect(errors.all.isEmpty, "\(errors.all)")
            // Rows are locked in one order across the statements, so no deadlock made a writer retry (with
            // the statements in any other order, this run retried after a deadlock).
            #expect(store.statistics.since(before).retries == 0)
            let stored = try store.fetch(FetchRequest(entityName: "Author"))
            #expect(stored.count == Self.rows)
            // Each row holds one whole write: every name is one of the last rounds' names.
            #expect(stored.allSatisfy { [.string("w0 r1"), .string("w1 r1")].contains($0.attributes["name"]) })
        }
    }
}
