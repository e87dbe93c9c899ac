@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// `ChangeSet.resolved(against:rules:)`, the one place where a save's changes are checked: what it hands a
/// store's plan is in each entity's layout, of the attributes' types, with the store's rules applied.
@Suite struct ChangeSetResolutionTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity(
                "Tag",
                attributes: [
                    Attribute("code", .string, optional: true, unique: true), Attribute("rank", .int16),
                    Attribute("seen", .date, optional: true),
                ])
        ])
    }

    @Test func valuesComeOutInTheEntitysLayoutAndTypesWithTheRulesApplied() throws {
        let index = ModelIndex(try Self.model())
        // Given by name, out of order, the rank as a wider integer.
        let change = ObjectChange(
            id: .temporary("Tag"),
            attributes: [
                "seen": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "rank": .int64(3), "code": .string("a"),
            ])
        let halve = ValueRule(.date) { value, _, _ in
            guard case .date(let date) = value else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down)))
        }
        let resolved = try ChangeSet(inserts: [change]).resolved(against: index, rules: [halve])
        let values = try #require(resolved.changes.inserts.first?.attributes)
        #expect(values.layout.names == ["code", "rank", "seen"])
        #expect(values[at: 1] == .int16(3))
        #expect(values[at: 2] == .date(Date(timeIntervalSinceReferenceDate: 1)))
        #expect(resolved.insertEntities.map(\.name) == ["Tag"])
        #expect(resolved.upsertPositions == [nil])
    }

    @Test func aRuleThatRefusesAValueFailsTheResolution() throws {
        struct Refused: Error {}
        let index = ModelIndex(try Self.model())
        let change = ObjectChange(id: .temporary("Tag"), attributes: ["code": .string("bad"), "rank": .int16(1)])
        let refuse = ValueRule(.string) { value, entity, position in
            if value == .string("bad"), entity.name == "Tag", entity.layout.names[position] == "code" {
                throw Refused()
            }
            return nil
        }
        #expect(throws: Refused.self) { try ChangeSet(inserts: [change]).resolved(against: index, rules: [refuse]) }
    }

    @Test func anUpsertWhoseKeyIsNullIsRefusedByEveryStore() throws {
        let store = MemoryStore(model: try Self.model())
        let change = ObjectChange(
            id: .temporary("Tag"), attributes: ["code": .null, "rank": .int16(1)], upsertKey: "code")
        #expect(throws: CVManagedStructError.missingValue(entity: "Tag", key: "code")) {
            try store.apply(ChangeSet(inserts: [change]))
        }
        #expect(try store.fetch(FetchRequest(entityName: "Tag")).isEmpty)
        let resolved = try ChangeSet(inserts: [
            ObjectChange(
                id: .temporary("Tag"), attributes: ["code": .string("k"), "rank": .int16(1)], upsertKey: "code")
        ]).resolved(against: ModelIndex(try Self.model()))
        #expect(resolved.upsertPositions == [0])
    }
}
