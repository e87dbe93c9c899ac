@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// Where an outside review found `MemoryStore` answering otherwise than `PostgresStore`: a floating-point NaN
/// (PostgreSQL: equal to NaN, greater than every number), a date with digits below the microsecond `timestamptz`
/// keeps, and values PostgreSQL cannot keep (text with a NUL character, a Decimal NaN). Each case runs on both
/// stores with the same expectations.
@Suite struct StoreParityTests {
    struct Reading: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Reading"
        static let IdentifierName = "id"
        var id: String
        var d: Double
        var f: Float
        var when: Date
        var note: String
        var amount: Decimal
        func IdentifierValue() -> IdentifierType { id }
        static func fromObject(_ o: ManagedObject) throws -> Reading {
            try curry(self.init) <^> o <| "id" <^> o <| "d" <^> o <| "f" <^> o <| "when" <^> o <| "note"
                <^> o <| "amount"
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity(
                "Reading",
                attributes: [
                    Attribute("id", .string, unique: true), Attribute("d", .double), Attribute("f", .float),
                    Attribute("when", .date), Attribute("note", .string), Attribute("amount", .decimal),
                ])
        ])
    }

    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func reading(_ id: String, _ value: Double, when: Date = start) -> Reading {
        Reading(id: id, d: value, f: Float(value), when: when, note: id, amount: 1)
    }

    static func onBothStores(_ function: String = #function, _ body: (any Store) throws -> Void) throws {
        try TestDatabase.onBothStores(model: try model(), function, body)
    }

    static func ids(_ store: any Store, _ predicate: CVPredicate?, sortedBy key: String = "id", ascending: Bool = true)
        throws -> [String]
    {
        let sort = ascending ? CVPredicateKey.key(key).ascending : CVPredicateKey.key(key).descending
        let found: [Reading] = try Reading.query(
            ManagedObjectContext(store: store), predicate: predicate, sortDescriptors: [sort])
        return found.map(\.id)
    }

    @Test func aNaNIsEqualToNaNAndGreaterThanEveryNumber() throws {
        try Self.onBothStores { (store: any Store) throws in
            try [
                Self.reading("a", .nan), Self.reading("b", 1), Self.reading("c", .infinity), Self.reading("d", 2),
            ].saveAll(ManagedObjectContext(store: store))
            for key in ["d", "f"] {
                let nan: AttributeValue = key == "d" ? .double(.nan) : .float(.nan)
                #expect(try Self.ids(store, .comparison(key: key, .equal, nan)) == ["a"], "\(key) == NaN")
                #expect(try Self.ids(store, .comparison(key: key, .notEqual, nan)) == ["b", "c", "d"])
                #expect(try Self.ids(store, .comparison(key: key, .lessThan, nan)) == ["b", "c", "d"])
                #expect(try Self.ids(store, .comparison(key: key, .greaterThan, nan)) == [])
                #expect(try Self.ids(store, .isIn(key: key, [nan])) == ["a"])
                #expect(try Self.ids(store, nil, sortedBy: key) == ["b", "d", "c", "a"], "\(key) ascending")
                #expect(try Self.ids(store, nil, sortedBy: key, ascending: false) == ["a", "c", "d", "b"])
            }
            let context = ManagedObjectContext(store: store)
            #expect(try Reading.aggregate(context, .maximum(\.d))?.isNaN == true)
            #expect(try Reading.aggregate(context, .minimum(\.d)) == 1)
        }
    }

    @Test func aDateIsComparedAtTheMicrosecondItIsStoredWith() throws {
        // A `Date()` taken now has digits below the microsecond; `timestamptz` keeps microseconds.
        let fine = Self.start.addingTimeInterval(0.123_456_7)
        try Self.onBothStores { (store: any Store) throws in
            try Self.reading("a", 1, when: fine).save(ManagedObjectContext(store: store))
            #expect(try Self.ids(store, .comparison(key: "when", .equal, .date(fine))) == ["a"])
            #expect(try Self.ids(store, .comparison(key: "when", .lessThanOrEqual, .date(fine))) == ["a"])
            #expect(try Self.ids(store, .comparison(key: "when", .lessThan, .date(fine))) == [])
            let stored: [Reading] = try Reading.query(ManagedObjectContext(store: store), predicate: nil)
            let micros = (stored.first?.when.timeIntervalSince(Self.start)).map { ($0 * 1e6).rounded() }
            #expect(micros == 123_457)
        }
    }

    @Test func whatPostgreSQLCannotKeepIsRefusedByBothStores() throws {
        var withNUL = Self.reading("nul", 1)
        withNUL.note = "a\u{0}b"
        var withNaN = Self.reading("nan", 1)
        withNaN.amount = .nan
        try Self.onBothStores { (store: any Store) throws in
            for (reading, key) in [(withNUL, "note"), (withNaN, "amount")] {
                let batch = [Self.reading("ok", 1), reading]
                #expect {
                    try batch.saveAll(ManagedObjectContext(store: store))
                } throws: { error in
                    if let error = error as? CVManagedStructError {
                        return store is MemoryStore && error.code == .structValueError
                            && error.entity == "Reading" && error.key == key
                    }
                    guard let error = error as? PostgresStoreError else { return false }
                    return error.code == .invalidValue && error.message.contains("Reading.\(key)")
                }
            }
            // Refused before anything was written.
            #expect(try Self.ids(store, nil) == [])
            // As operands of a query, too, however nested.
            for (predicate, key): (CVPredicate, String) in [
                (.comparison(key: "note", .equal, .string("a\u{0}")), "note"),
                (.not(.and([.true, .isIn(key: "amount", [.decimal(1), .decimal(.nan)])])), "amount"),
            ] {
                #expect {
                    _ = try Self.ids(store, predicate)
                } throws: { error in
                    if let error = error as? CVManagedStructError {
                        return store is MemoryStore && error.code == .structValueError && error.key == key
                    }
                    guard let error = error as? PostgresStoreError else { return false }
                    return error.code == .invalidValue && error.message.contains("Reading.\(key)")
                }
            }
        }
    }
}
