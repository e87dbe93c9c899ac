@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import Testing

/// Every predicate kind against the server, compared with the same filter evaluated in Swift on seeded data.
@Suite struct PredicateIntegrationTests {
    struct Car {
        var key: Int64
        var name: String
        var doors: Int32
        var mileage: Int64
        var registered: Bool
        var nickname: String?
    }

    static let names = ["Alpha", "alpha_1", "Beta 50%", "gamma\\x", "Δelta", "épsilon", "Zeta'", "ALPHABET"]

    @Test func everyPredicateKindMatchesASwiftFilter() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededRandom(seed: seed)
        try TestDatabase.withExampleStore { store, _, _ in
            var cars: [Car] = []
            var inserts: [ObjectChange] = []
            for index in 0..<60 {
                let name = Self.names[Int.random(in: 0..<Self.names.count, using: &generator)] + " \(index % 7)"
                let nickname: String? = Bool.random(using: &generator) ? nil : "n\(index % 5)"
                var attributes = StoreRoundTripTests.car(index)
                attributes["name"] = .string(name)
                attributes["nickname"] = nickname.map(AttributeValue.string) ?? .null
                let doors = Int32.random(in: 2...5, using: &generator)
                let mileage = Int64.random(in: 0...1000, using: &generator)
                attributes["doors"] = .int32(doors)
                attributes["mileage"] = .int64(mileage)
                let change = ObjectChange(id: .temporary("Car"), attributes: attributes)
                inserts.append(change)
                cars.append(
                    Car(
                        key: 0, name: name, doors: doors, mileage: mileage,
                        registered: attributes["registered"] == .bool(true), nickname: nickname))
            }
            let result = try store.apply(ChangeSet(inserts: inserts))
            for index in cars.indices { cars[index].key = result.permanentIDs[inserts[index].id]?.primaryKey ?? -1 }

            let cases: [(CVPredicate, (Car) -> Bool)] = [
                (.comparison(key: "doors", .equal, .int32(3)), { $0.doors == 3 }),
                (.comparison(key: "doors", .notEqual, .int64(3)), { $0.doors != 3 }),
                (.comparison(key: "mileage", .lessThan, .int64(500)), { $0.mileage < 500 }),
                (.comparison(key: "mileage", .lessThanOrEqual, .int32(500)), { $0.mileage <= 500 }),
                (.comparison(key: "mileage", .greaterThan, .int64(200)), { $0.mileage > 200 }),
                (.comparison(key: "mileage", .greaterThanOrEqual, .int64(200)), { $0.mileage >= 200 }),
                (.isIn(key: "doors", [.int32(2), .int32(5)]), { $0.doors == 2 || $0.doors == 5 }),
                (.between(key: "mileage", .int64(100), .int64(600)), { (100...600).contains($0.mileage) }),
                (.isNull(key: "nickname"), { $0.nickname == nil }),
                (.comparison(key: "nickname", .notEqual, .null), { $0.nickname != nil }),
                (.not(.comparison(key: "registered", .equal, .bool(true))), { !$0.registered }),
                (.stringMatch(key: "name", .like, "Alpha%", caseInsensitive: false), { $0.name.hasPrefix("Alpha") }),
                (
                    .stringMatch(key: "name", .beginsWith, "alpha", caseInsensitive: true),
                    { $0.name.lowercased().hasPrefix("alpha") }
                ),
                (
                    .stringMatch(key: "name", .beginsWith, "alpha_", caseInsensitive: false),
                    { $0.name.hasPrefix("alpha_") }
                ),
                (.stringMatch(key: "name", .contains, "50%", caseInsensitive: false), { $0.name.contains("50%") }),
                (.stringMatch(key: "name", .contains, "\\x", caseInsensitive: false), { $0.name.contains("\\x") }),
                (.stringMatch(key: "name", .endsWith, "' 3", caseInsensitive: false), { $0.name.hasSuffix("' 3") }),
                (
                    .stringMatch(key: "name", .contains, "ÉPSILON", caseInsensitive: true),
                    { $0.name.contains("épsilon") }
                ),
                (
                    .and([
                        .comparison(key: "doors", .greaterThan, .int32(2)),
                        .or([.isNull(key: "nickname"), .comparison(key: "mileage", .lessThan, .int64(300))]),
                    ]),
                    { $0.doors > 2 && ($0.nickname == nil || $0.mileage < 300) }
                ),
                (.isIn(key: "doors", []), { _ in false }),
            ]
            for (predicate, filter) in cases {
                let rows = try store.fetch(FetchRequest(entityName: "Car", predicate: predicate))
                // Without sort descriptors the order is unspecified: compared in key order.
                let expected = cars.filter(filter).map(\.key).sorted()
                #expect(rows.compactMap(\.id.primaryKey).sorted() == expected, "seed \(seed): \(predicate)")
            }
        }
    }

    @Test func sortLimitAndOffsetPage() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let inserts = (0..<20).map { index in
                var attributes = StoreRoundTripTests.car(index)
                attributes["mileage"] = .int64(Int64(index % 4))
                attributes["name"] = .string("car \(String(format: "%02d", index))")
                return ObjectChange(id: .temporary("Car"), attributes: attributes)
            }
            _ = try store.apply(ChangeSet(inserts: inserts))
            let request = FetchRequest(
                entityName: "Car",
                sortDescriptors: [CVSortDescriptor(key: "mileage", ascending: false), CVSortDescriptor(key: "name")],
                fetchLimit: 5, fetchOffset: 3)
            let names = try store.fetch(request).compactMap { row -> String? in
                if case .string(let name)? = row.attributes["name"] { return name }
                return nil
            }
            #expect(names == ["car 15", "car 19", "car 02", "car 06", "car 10"])
            #expect(try store.fetch(FetchRequest(entityName: "Car", fetchLimit: 0)).isEmpty)
        }
    }
}
