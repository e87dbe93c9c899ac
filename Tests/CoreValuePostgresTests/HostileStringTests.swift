@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import Testing

@Suite struct HostileStringTests {
    static let corpus: [String] = [
        "", "'", "''", "\"", "\\", "\\\\'", "'; DROP TABLE \"Car\"; --", "Robert'); DROP TABLE Students;--",
        "$1", "%", "_", "\\%\\_", "E'\\x00'", "Ünïcödé ✓", "👩‍👩‍👧‍👦🚗🇫🇷", "\u{202E}rtl", "line\nbreak\ttab\r",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "a\u{301}", String(repeating: "x'\"\\", count: 262_144),
    ]

    /// A unique (b-tree indexed) column holds at most about 2.7 kB per value: long strings are cut for it.
    static func identifier(_ text: String) -> String { text.utf8.count <= 2_000 ? text : String(text.prefix(400)) }

    @Test func hostileStringsRoundTripAsValuesIdentifiersAndOperands() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            var inserts: [ObjectChange] = []
            for (index, text) in Self.corpus.enumerated() {
                var attributes = StoreRoundTripTests.car(index)
                attributes["name"] = .string(text)
                attributes["nickname"] = .string(text + "!")
                inserts.append(ObjectChange(id: .temporary("Car"), attributes: attributes))
                inserts.append(
                    ObjectChange(
                        id: .temporary("Author"),
                        attributes: ["id": .string(Self.identifier(text)), "name": .string(text)], upsertKey: "id"))
            }
            let result = try store.apply(ChangeSet(inserts: inserts))
            for (index, text) in Self.corpus.enumerated() {
                let equal = try store.fetch(
                    FetchRequest(entityName: "Car", predicate: .comparison(key: "name", .equal, .string(text))))
                #expect(equal.count == 1, "corpus[\(index)]")
                #expect(equal.first?.attributes["name"] == .string(text))
                #expect(equal.first?.attributes["nickname"] == .string(text + "!"))
                #expect(equal.first?.id == result.permanentIDs[inserts[index * 2].id])
                let contains = try store.fetch(
                    FetchRequest(
                        entityName: "Car",
                        predicate: .stringMatch(key: "nickname", .endsWith, text + "!", caseInsensitive: false)))
                #expect(contains.contains { $0.attributes["name"] == .string(text) }, "corpus[\(index)]")
                let authors = try store.fetch(entityName: "Author", key: "id", values: [.string(Self.identifier(text))])
                #expect(authors.map { $0.attributes["name"] } == [.string(text)], "corpus[\(index)]")
            }
            #expect(try store.fetch(FetchRequest(entityName: "Car")).count == Self.corpus.count)
        }
    }

    @Test func aNulCharacterIsATypedErrorBeforeAnythingIsSent() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            var attributes = StoreRoundTripTests.car(1)
            attributes["name"] = .string("a\u{0}b")
            let before = store.statistics
            #expect {
                try store.apply(ChangeSet(inserts: [ObjectChange(id: .temporary("Car"), attributes: attributes)]))
            } throws: { error in
                guard let error = error as? PostgresStoreError else { return false }
                return error.code == .invalidValue && error.message.contains("Car.name")
            }
            #expect(throws: PostgresStoreError.self) {
                try store.fetch(
                    FetchRequest(entityName: "Car", predicate: .comparison(key: "name", .equal, .string("\u{0}"))))
            }
            #expect(store.statistics.since(before).roundTrips == 0)
        }
    }
}
