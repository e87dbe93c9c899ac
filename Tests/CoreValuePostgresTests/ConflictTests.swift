@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

@Suite struct ConflictTests {
    func insertCar(_ store: PostgresStore) throws -> ManagedObjectID {
        let id = ManagedObjectID.temporary("Car")
        let result = try store.apply(ChangeSet(inserts: [ObjectChange(id: id, attributes: StoreRoundTripTests.car(1))]))
        return try #require(result.permanentIDs[id])
    }

    @Test func twoWritersOfOneVersionConflict() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            let car = try insertCar(store)
            let other = try PostgresStore(
                model: store.model, configuration: try .init(url: url, schema: schema).with { $0.poolSize = 1 })
            defer { other.close() }
            _ = try other.apply(
                ChangeSet(updates: [ObjectChange(id: car, version: 1, attributes: ["name": .string("theirs")])]))
            #expect {
                try store.apply(
                    ChangeSet(updates: [ObjectChange(id: car, version: 1, attributes: ["name": .string("mine")])]))
            } throws: { error in
                guard let error = error as? CVManagedStructError, error.code == .conflict else { return false }
                return error.entity == "Car" && error.message?.contains("Car/\(car.primaryKey ?? 0)") == true
            }
            #expect(try store.fetch(ids: [car]).first?.attributes["name"] == .string("theirs"))
            #expect(throws: CVManagedStructError.self) {
                try store.apply(ChangeSet(deletes: [ObjectDeletion(id: car, version: 1)]))
            }
            #expect(try store.fetch(ids: [car]).count == 1)
        }
    }

    @Test func aStaleIDIsAConflictNeverAnInsert() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let car = try insertCar(store)
            _ = try store.apply(ChangeSet(deletes: [ObjectDeletion(id: car, version: nil)]))
            #expect(throws: CVManagedStructError.self) {
                try store.apply(
                    ChangeSet(updates: [ObjectChange(id: car, version: nil, attributes: ["name": .string("x")])]))
            }
            #expect(try store.fetch(FetchRequest(entityName: "Car")).isEmpty)
        }
    }

    @Test func aFailingLastEntityChangesNothing() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let car = try insertCar(store)
            _ = try store.apply(
                ChangeSet(inserts: [
                    ObjectChange(
                        id: .temporary("Product"),
                        attributes: ["id": .int32(1), "name": .string("p"), "price": .decimal(1)])
                ]))
            let before =
                try store.fetch(FetchRequest(entityName: "Car")) + store.fetch(FetchRequest(entityName: "Product"))
            // The second product repeats id 1 without an upsert key: a unique violation in the last statement.
            let changes = ChangeSet(
                inserts: [
                    ObjectChange(id: .temporary("Car"), attributes: StoreRoundTripTests.car(2)),
                    ObjectChange(
                        id: .temporary("Product"),
                        attributes: ["id": .int32(1), "name": .string("dup"), "price": .decimal(2)]),
                ],
                updates: [ObjectChange(id: car, version: 1, attributes: ["name": .string("changed")])])
            #expect {
                try store.apply(changes)
            } throws: { error in
                (error as? PostgresStoreError)?.sqlState == .uniqueViolation
            }
            let after =
                try store.fetch(FetchRequest(entityName: "Car")) + store.fetch(FetchRequest(entityName: "Product"))
            #expect(after == before)
        }
    }

    @Test func statementCountsDoNotDependOnRowCount() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            func saveCompanies(_ count: Int) throws -> (
                insert: StoreStatistics, update: StoreStatistics, fetch: StoreStatistics
            ) {
                var inserts: [ObjectChange] = []
                var links: [RelationshipChange] = []
                for index in 0..<count {
                    let company = ObjectChange(id: .temporary("Company"), attributes: ["name": .string("C\(index)")])
                    let employee = RelationshipTests.employee("E\(index)")
                    inserts += [company, employee]
                    links.append(
                        RelationshipChange(owner: company.id, relationship: "employees", members: [employee.id]))
                }
                var before = store.statistics
                let result = try store.apply(ChangeSet(inserts: inserts, relationships: links))
                let insert = store.statistics.since(before)
                let companies = inserts.enumerated().filter { $0.offset.isMultiple(of: 2) }.compactMap {
                    result.permanentIDs[$0.element.id]
                }
                before = store.statistics
                _ = try store.apply(
                    ChangeSet(
                        updates: companies.map {
                            ObjectChange(id: $0, version: 1, attributes: ["name": .string("renamed")])
                        },
                        deletes: []))
                let update = store.statistics.since(before)
                before = store.statistics
                let rows = try store.fetch(
                    FetchRequest(entityName: "Company", predicate: .comparison(key: "name", .equal, .string("renamed")))
                )
                #expect(rows.count == count)
                let fetch = store.statistics.since(before)
                _ = try store.apply(ChangeSet(deletes: companies.map { ObjectDeletion(id: $0, version: 2) }))
                return (insert, update, fetch)
            }
            // The first save prepares each statement for the connection's cache (the one sent alone with one
            // round trip more); counted from the second on, as a long-running process sees them.
            let first = try saveCompanies(10)
            let small = try saveCompanies(10)
            // Without a cache (make test-ha through pgbouncer), nothing is prepared and nothing costs more.
            let prepares = TestDatabase.statementCacheSize != 0
            #expect(first.insert.roundTrips == small.insert.roundTrips + (prepares ? 1 : 0))
            #expect(first.insert.statementsPrepared == (prepares ? 5 : 0))
            #expect(small.insert.statementsPrepared == 0)
            let large = try saveCompanies(1000)
            #expect(small.insert == large.insert)
            #expect(small.update == large.update)
            #expect(small.fetch == large.fetch)
            // Company insert, Employee insert, unlink, link; in one transaction. Unlink and link need only the
            // keys the inserts returned: they share one pipeline (BEGIN with the first insert, the second insert,
            // the pipeline, COMMIT). The commit identifier goes with the first insert: one statement more.
            #expect(large.insert.statements == 5)
            #expect(large.insert.roundTrips == 4)
            #expect(large.update.statements == 2)
            // The rows, each with its relationship's keys: one statement, no transaction.
            #expect(large.fetch.statements == 1)
            #expect(large.fetch.transactions == 0)
        }
    }

    /// Rows written "unless current" (unique structs saved unchanged) are checked by their versions alone, and
    /// only the ones another writer moved on are written, whole, in one more round trip.
    @Test func rowsWrittenUnlessCurrentAreCheckedByVersionAndWrittenOnlyWhenStale() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            func product(_ id: Int) -> AttributeValues {
                ["id": .int32(Int32(id)), "name": .string("P\(id)"), "price": .decimal(Decimal(id))]
            }
            let inserts = (1...300).map { ObjectChange(id: .temporary("Product"), attributes: product($0)) }
            let saved = try store.apply(ChangeSet(inserts: inserts))
            let ids = try inserts.map { try #require(saved.permanentIDs[$0.id]) }
            func unchanged() -> ChangeSet {
                ChangeSet(
                    updates: ids.enumerated().map { offset, id in
                        ObjectChange(id: id, version: 1, attributes: product(offset + 1), unlessCurrent: true)
                    })
            }
            // All current: one statement (the versions), nothing written; and the commit identifier.
            var before = store.statistics
            _ = try store.apply(unchanged())
            var spent = store.statistics.since(before)
            #expect(spent.statements == 2)
            // BEGIN goes with it; then COMMIT.
            #expect(spent.roundTrips == 2)
            #expect(try store.fetch(ids: ids).allSatisfy { $0.version == 1 })

            // Another writer changes two rows: those two are written back whole, the others are not touched.
            let other = try PostgresStore(
                model: store.model, configuration: try .init(url: url, schema: schema).with { $0.poolSize = 1 })
            defer { other.close() }
            _ = try other.apply(
                ChangeSet(
                    updates: [ids[9], ids[199]].map {
                        ObjectChange(id: $0, version: 1, attributes: ["name": .string("theirs")])
                    }))
            before = store.statistics
            let result = try store.apply(unchanged())
            spent = store.statistics.since(before)
            #expect(spent.statements == 3)
            #expect(spent.roundTrips == 3)
            #expect(Set(result.versions.keys) == [ids[9], ids[199]])
            let rows = try store.fetch(ids: ids)
            #expect(
                rows.allSatisfy { row in
                    guard case .int32(let id)? = row.attributes["id"] else { return false }
                    return row.attributes["name"] == .string("P\(id)")
                })
            #expect(Set(rows.filter { $0.version == 3 }.map(\.id)) == [ids[9], ids[199]])

            func theirs(_ id: ManagedObjectID) throws {
                _ = try other.apply(
                    ChangeSet(updates: [ObjectChange(id: id, version: nil, attributes: ["name": .string("theirs")])]))
            }
            // In any order (here descending keys): each returned version is matched to its own row (the two
            // written above are at version 3 now, so they are stale against version 1 too).
            try theirs(ids[150])
            let reversed = try store.apply(ChangeSet(updates: unchanged().updates.reversed()))
            #expect(Set(reversed.versions.keys) == [ids[9], ids[150], ids[199]])
            #expect(try store.fetch(ids: [ids[150]]).first?.attributes["name"] == .string("P151"))

            // A stale row given as two changes, the second's price an integer: their values are made into one
            // row, coerced, only once the row is found stale.
            try theirs(ids[20])
            _ = try store.apply(
                ChangeSet(updates: [
                    ObjectChange(id: ids[20], version: 1, attributes: product(21), unlessCurrent: true),
                    ObjectChange(id: ids[20], version: 1, attributes: ["price": .int64(99)], unlessCurrent: true),
                ]))
            let merged = try #require(try store.fetch(ids: [ids[20]]).first)
            #expect(merged.attributes["name"] == .string("P21"))
            #expect(merged.attributes["price"] == .decimal(99))
            // Text PostgreSQL cannot hold in a stale row fails the save then, inside its transaction: the other
            // row of the save is not written.
            try theirs(ids[30])
            #expect(throws: PostgresStoreError.self) {
                try store.apply(
                    ChangeSet(updates: [
                        ObjectChange(id: ids[31], version: 1, attributes: ["name": .string("mine")]),
                        ObjectChange(
                            id: ids[30], version: 1, attributes: ["name": .string("a\u{0}b")], unlessCurrent: true),
                    ]))
            }
            #expect(try store.fetch(ids: [ids[31]]).first?.attributes["name"] == .string("P32"))
            #expect(try store.fetch(ids: [ids[30]]).first?.attributes["name"] == .string("theirs"))

            // A row deleted meanwhile: a conflict, and nothing is written.
            _ = try other.apply(ChangeSet(deletes: [ObjectDeletion(id: ids[0], version: nil)]))
            _ = try other.apply(
                ChangeSet(updates: [ObjectChange(id: ids[5], version: 1, attributes: ["name": .string("theirs")])]))
            #expect {
                try store.apply(unchanged())
            } throws: { error in
                (error as? CVManagedStructError)?.code == .conflict
            }
            #expect(try store.fetch(ids: [ids[5]]).first?.attributes["name"] == .string("theirs"))
        }
    }
}
