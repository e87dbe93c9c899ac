@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// Aggregates (issue 32, point 3): sum, average, minimum, maximum and counts of an attribute, over what a
/// predicate matches, whole or per group; the same results from both stores, typed and untyped, sync and
/// async, with SQL's nulls, an integer sum that does not fit refused, and unsaved changes included.
@Suite struct AggregateTests {
    struct Account: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Account"
        static let IdentifierName = "id"
        var id: Int64
        var branch: String?
        var tier: Int16
        var balance: Int64
        var rate: Double
        var bonus: Decimal?
        var openedAt: Date
        var active: Bool
        func IdentifierValue() -> IdentifierType { id }
        static func fromObject(_ o: ManagedObject) throws -> Account {
            try curry(self.init) <^> o <| "id" <^> o <|? "branch" <^> o <| "tier" <^> o <| "balance" <^> o <| "rate"
                <^> o <|? "bonus" <^> o <| "openedAt" <^> o <| "active"
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity(
                "Account",
                attributes: [
                    Attribute("id", .int64, unique: true), Attribute("branch", .string, optional: true),
                    Attribute("tier", .int16), Attribute("balance", .int64), Attribute("rate", .double),
                    Attribute("bonus", .decimal, optional: true), Attribute("openedAt", .date),
                    Attribute("active", .bool),
                ])
        ])
    }

    static let day: TimeInterval = 86_400
    static func accounts() -> [Account] {
        let start = Date(timeIntervalSince1970: 1_600_000_000)
        return [
            Account(
                id: 1, branch: "north", tier: 1, balance: 100, rate: 0.5, bonus: Decimal(string: "1.25"),
                openedAt: start, active: true),
            Account(
                id: 2, branch: "north", tier: 2, balance: 300, rate: 1.5, bonus: nil,
                openedAt: start + day, active: false),
            // "Z" sorts before "n" in byte order, as both stores order text.
            Account(
                id: 3, branch: "Zeta", tier: 1, balance: -50, rate: 2, bonus: Decimal(string: "0.75"),
                openedAt: start + 2 * day, active: true),
            Account(id: 4, branch: nil, tier: 3, balance: 10, rate: 0, bonus: nil, openedAt: start - day, active: true),
        ]
    }

    /// Every typed aggregate, whole and grouped, on a store: the values SQL gives.
    static func exercise(_ store: any Store) throws {
        try accounts().saveAll(ManagedObjectContext(store: store))
        let context = ManagedObjectContext(store: store)
        let start = Date(timeIntervalSince1970: 1_600_000_000)
        #expect(try Account.aggregate(context, .sum(\.balance)) == 360)
        #expect(try Account.aggregate(context, .sum(\.balance), where: #Predicate { $0.active }) == 60)
        #expect(try Account.aggregate(context, .average(\.balance)) == 90)
        #expect(try Account.aggregate(context, .average(\.tier)) == 1.75)
        #expect(try Account.aggregate(context, .sum(\.rate)) == 4)
        #expect(try Account.aggregate(context, .sum(\.bonus)) == Decimal(2))
        #expect(try Account.aggregate(context, .average(\.bonus)) == Decimal(1))
        #expect(try Account.aggregate(context, .minimum(\.openedAt)) == start - day)
        #expect(try Account.aggregate(context, .maximum(\.openedAt)) == start + 2 * day)
        #expect(try Account.aggregate(context, .minimum(\.branch)) == "Zeta")
        #expect(try Account.aggregate(context, .maximum(\.tier)) == 3)
        #expect(try Account.aggregate(context, .count(\.branch)) == 3)
        #expect(try Account.aggregate(context, .count(\.bonus)) == 2)
        #expect(try Account.aggregate(context, .rows) == 4)
        // SQL's nulls: nothing to fold is nil, not zero; a count is zero.
        #expect(try Account.aggregate(context, .sum(\.balance), where: #Predicate { $0.tier > 5 }) == nil)
        #expect(try Account.aggregate(context, .maximum(\.bonus), where: #Predicate { $0.id == 2 }) == nil)
        #expect(try Account.aggregate(context, .rows, where: #Predicate { $0.tier > 5 }) == 0)

        let perBranch = try Account.aggregate(context, .sum(\.balance), groupedBy: \.branch)
        #expect(perBranch.map(\.key) == ["Zeta", "north", nil])
        #expect(perBranch.map(\.value) == [-50, 400, 10])
        let bonusPerTier = try Account.aggregate(context, .sum(\.bonus), groupedBy: \.tier)
        #expect(bonusPerTier.map(\.key) == [1, 2, 3])
        #expect(bonusPerTier.map(\.value) == [Decimal(2), nil, nil])
        let activePerTier = try Account.aggregate(
            context, .rows, groupedBy: \.tier, where: #Predicate { $0.active })
        #expect(activePerTier.map(\.key) == [1, 3])
        #expect(activePerTier.map(\.value) == [2, 1])
        let perActive = try Account.aggregate(context, .maximum(\.rate), groupedBy: \.active)
        #expect(perActive == [AggregateGroup(key: false, value: 1.5), AggregateGroup(key: true, value: 2)])
        #expect(try Account.aggregate(context, .rows, groupedBy: \.tier, where: #Predicate { $0.tier > 5 }).isEmpty)

        // Untyped, grouped by two attributes, with a string-keyed predicate.
        let rows = try context.aggregate(
            AggregateRequest(
                entityName: "Account", .count, of: "bonus", predicate: .key("balance") > Int64(0),
                groupedBy: ["active", "tier"]))
        #expect(
            rows == [
                AggregateRow(group: [.bool(false), .int16(2)], value: .int64(0)),
                AggregateRow(group: [.bool(true), .int16(1)], value: .int64(1)),
                AggregateRow(group: [.bool(true), .int16(3)], value: .int64(0)),
            ])
    }

    /// What no store can answer is refused before anything is sent; an integer sum beyond Int64 is an error.
    static func refusals(_ store: any Store) throws {
        let context = ManagedObjectContext(store: store)
        try Self.expectCode(.typeMismatch) {
            _ = try context.aggregate(AggregateRequest(entityName: "Account", .sum, of: "branch"))
        }
        try Self.expectCode(.typeMismatch) {
            _ = try context.aggregate(AggregateRequest(entityName: "Account", .minimum, of: "active"))
        }
        try Self.expectCode(.unknownKey) {
            _ = try context.aggregate(AggregateRequest(entityName: "Account", .maximum, of: "nope"))
        }
        try Self.expectCode(.unknownKey) {
            _ = try context.aggregate(AggregateRequest(entityName: "Account", .countRows, of: nil, groupedBy: ["x"]))
        }
        try Self.expectCode(.invalidPredicate) {
            _ = try context.aggregate(AggregateRequest(entityName: "Account", .countRows, of: "tier"))
        }
        try Self.expectCode(.invalidPredicate) {
            _ = try context.aggregate(AggregateRequest(entityName: "Account", .sum, of: nil))
        }
        // Partial sums past Int64 are fine when the total fits (as numeric's are); a total that does not is
        // refused, never wrapped.
        let start = Date(timeIntervalSince1970: 0)
        try [
            Account(id: 10, branch: "big", tier: 9, balance: .max, rate: 0, bonus: nil, openedAt: start, active: true),
            Account(id: 11, branch: "big", tier: 9, balance: 5, rate: 0, bonus: nil, openedAt: start, active: true),
            Account(id: 12, branch: "big", tier: 9, balance: -10, rate: 0, bonus: nil, openedAt: start, active: true),
        ].saveAll(context)
        #expect(try Account.aggregate(context, .sum(\.balance), where: #Predicate { $0.tier == 9 }) == .max - 5)
        try Account(id: 13, branch: "big", tier: 9, balance: 6, rate: 0, bonus: nil, openedAt: start, active: true)
            .save(context)
        try Self.expectCode(.aggregateOverflow) {
            _ = try Account.aggregate(context, .sum(\.balance), where: #Predicate { $0.tier == 9 })
        }
        try Self.expectCode(.aggregateOverflow) {
            _ = try Account.aggregate(context, .sum(\.balance), groupedBy: \.branch)
        }
        // The mean of the same values is exact enough to be a Double.
        let mean: Double? = try Account.aggregate(context, .average(\.balance), where: #Predicate { $0.tier == 9 })
        let expected = Double(Int64.max) / 4
        #expect(abs((mean ?? 0) - expected) < 1e6)
    }

    /// Unsaved changes count, as in every fetch and count: an insert and a change.
    static func pendingChanges(_ store: any Store) async throws {
        let context = ManagedObjectContext(store: store)
        let found: [Account] = try await Account.query(context, predicate: .key("id") == Int64(1))
        var changed = try #require(found.first)
        changed.balance = 1_000
        _ = try await changed.toObject(context)
        let extra = Account(
            id: 99, branch: "south", tier: 1, balance: 7, rate: 0, bonus: nil, openedAt: Date(), active: true)
        _ = try await extra.toObject(context)
        // 360 stored, account 1 from 100 to 1,000, and 7 more.
        let total: Int64? = try await Account.aggregate(context, .sum(\.balance))
        #expect(total == 1_267)
        let perBranch = try await Account.aggregate(context, .rows, groupedBy: \.branch)
        #expect(perBranch.map(\.key) == ["Zeta", "north", "south", nil])
        // Another context sees only what was stored.
        #expect(try await Account.aggregate(ManagedObjectContext(store: store), .sum(\.balance)) == 360)
        try await context.save()
        #expect(try await Account.aggregate(ManagedObjectContext(store: store), .sum(\.balance)) == 1_267)
    }

    /// Expects `body` to throw a ``CVManagedStructError`` of `code`.
    static func expectCode(
        _ code: CVManagedStructError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) throws {
        let error = #expect(throws: CVManagedStructError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    @Test func memoryStoreAggregates() async throws {
        try Self.exercise(MemoryStore(model: try Self.model()))
        try Self.refusals(MemoryStore(model: try Self.model()))
        let store = MemoryStore(model: try Self.model())
        try await Self.accounts().saveAll(ManagedObjectContext(store: store))
        try await Self.pendingChanges(store)
    }

    @Test func postgresAggregatesInOneStatement() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try await TestSchema.with(model: try Self.model()) { schema in
            try Self.exercise(schema.store)
            let before = schema.store.statistics
            _ = try await Account.aggregate(
                ManagedObjectContext(store: schema.store), .sum(\.balance), groupedBy: \.branch)
            #expect(schema.store.statistics.since(before).statements == 1)
            try await Self.pendingChanges(schema.store)
        }
        try TestSchema.with(model: try Self.model()) { schema in try Self.refusals(schema.store) }
    }
}
