@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

@Suite struct StoreRoundTripTests {
    static func car(_ index: Int, photo: Data? = Data([0, 1, 2, 255])) -> AttributeValues {
        [
            "name": .string("Car \(index)"), "kind": .string(index.isMultiple(of: 2) ? "sedan" : "coupé 🚗"),
            "doors": .int32(Int32(2 + index % 3)), "mileage": .int64(Int64(index) * 1_000_000_007),
            "seats": .int16(Int16(index % 9)), "weight": .float(1234.5), "power": .double(Double(index) + 0.125),
            "registered": .bool(index.isMultiple(of: 3)),
            "price": .decimal(Decimal(string: "12345678901234567890.123456789") ?? 0),
            "builtAt": .date(Date(timeIntervalSince1970: 1_700_000_000.123456)),
            "vin": .uuid(UUID()), "photo": photo.map(AttributeValue.data) ?? .null,
            "nickname": index.isMultiple(of: 2) ? .null : .string("nick \(index)"),
        ]
    }

    @Test func everyAttributeTypeRoundTrips() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let id = ManagedObjectID.temporary("Car")
            let attributes = Self.car(1)
            let saved = try store.apply(ChangeSet(inserts: [ObjectChange(id: id, attributes: attributes)]))
            let permanent = try #require(saved.permanentIDs[id])
            #expect(saved.versions[permanent] == 1)
            let rows = try store.fetch(ids: [permanent])
            #expect(rows.count == 1)
            #expect(rows.first?.attributes == attributes)
            #expect(rows.first?.version == 1)

            var changed = attributes
            changed["nickname"] = .string("renamed")
            changed["photo"] = .null
            let updated = try store.apply(
                ChangeSet(
                    updates: [
                        ObjectChange(
                            id: permanent, version: 1, attributes: ["nickname": .string("renamed"), "photo": .null])
                    ]))
            #expect(updated.versions[permanent] == 2)
            let reread = try store.fetch(FetchRequest(entityName: "Car"))
            #expect(reread.map(\.attributes) == [changed])
            #expect(reread.first?.version == 2)

            _ = try store.apply(ChangeSet(deletes: [ObjectDeletion(id: permanent, version: 2)]))
            #expect(try store.fetch(FetchRequest(entityName: "Car")).isEmpty)
            #expect(try store.fetch(ids: [permanent]).isEmpty)
        }
    }

    @Test func uniqueValuesAreFoundInOneStatement() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let inserts = (1...5).map { index in
                ObjectChange(
                    id: .temporary("Product"),
                    attributes: [
                        "id": .int32(Int32(index)), "name": .string("P\(index)"), "price": .decimal(Decimal(index)),
                    ])
            }
            _ = try store.apply(ChangeSet(inserts: inserts))
            let before = store.statistics
            let rows = try store.fetch(entityName: "Product", key: "id", values: [.int64(2), .int32(4), .int32(99)])
            #expect(Set(rows.compactMap { $0.attributes["name"] }) == [.string("P2"), .string("P4")])
            #expect(store.statistics.since(before).statements == 1)
        }
    }

    @Test func missingAndWrongValuesAreRejectedBeforeSQL() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            var attributes = Self.car(1)
            attributes["name"] = nil
            let before = store.statistics
            #expect(throws: CVManagedStructError.missingValue(entity: "Car", key: "name")) {
                try store.apply(ChangeSet(inserts: [ObjectChange(id: .temporary("Car"), attributes: attributes)]))
            }
            attributes["name"] = .int64(3)
            #expect(
                throws: CVManagedStructError.typeMismatch(
                    entity: "Car", key: "name", expected: "string", found: "int64")
            ) {
                try store.apply(ChangeSet(inserts: [ObjectChange(id: .temporary("Car"), attributes: attributes)]))
            }
            #expect(throws: CVManagedStructError.unknownKey(entity: "Car", key: "wings")) {
                try store.fetch(FetchRequest(entityName: "Car", predicate: .isNull(key: "wings")))
            }
            #expect(store.statistics.since(before).roundTrips == 0)
        }
    }
}
