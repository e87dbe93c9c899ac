@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Random predicates over random employees, checked against a reference evaluation written directly on the
/// structs (SQL's three-valued logic, code-point string order). Run against PostgresStore this cross-checks
/// the SQL the store generates; the seed is in every failure message.
enum RandomPredicateSuite {
    static let cases: [SuiteCase] = [1, 2, 3].map { seed in
        SuiteCase("random predicates agree with the reference (seed \(seed))") { make, api in
            try await run(seed: UInt64(seed), make, via: api)
        }
    }

    /// A predicate and its reference: `nil` means SQL's unknown.
    private struct Probe {
        let predicate: CVPredicate
        let reference: (Employee) -> Bool?
    }

    /// ASCII and non-ASCII names: dotted and dotless i, a final and a medial sigma, titlecase digraphs,
    /// sharp s, umlauts, Cyrillic, a combining mark, and capitals from Unicode 14 (U+2C2F, U+A7C0), 16 (U+A7CB,
    /// U+10D50, U+A7DC) and 17 (U+A7CE): a server's ICU lower-cases only the letters of its Unicode version.
    private static let names = [
        "anna", "Bert", "cara", "Dora", "emil", "Fynn", "gus", "Hana", "İpek", "ıšık", "ΟΔΟΣ", "Σοφία",
        "Ǆemal", "straße", "STRASSE", "Ärger", "äsa", "Дина", "i\u{307}lker", "\u{2C2F}ora", "\u{A7C0}la",
        "\u{A7CB}ik", "\u{10D50}x", "\u{A7DC}y", "\u{A7CE}z",
    ]
    private static let departments = ["Sales", "IT", "Board"]

    static func run(seed: UInt64, _ make: StoreFactory, via api: APIMode) async throws {
        var random = SeededRandom(seed: seed)
        let store = try make()
        var staff = (0..<40).map { index in
            Employee(
                name: "\(names[index % names.count])\(index)", age: Int16.random(in: 20...60, using: &random),
                position: Bool.random(using: &random) ? nil : ["Lead", "Head"][index % 2],
                department: departments.randomElement(using: &random) ?? "IT", job: "J")
        }
        try await staff.saveAll(ManagedObjectContext(store: store), via: api)
        var sizes = Set<Int>()
        for round in 0..<40 {
            let probe = makeProbe(depth: 2, &random)
            let sorted = [CVSortDescriptor(key: "age", ascending: false), CVSortDescriptor(key: "name")]
            let read: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: probe.predicate, sortDescriptors: sorted, via: api)
            let expected = staff.filter { probe.reference($0) == true }.sorted { lhs, rhs in
                lhs.age != rhs.age
                    ? lhs.age > rhs.age : lhs.name.unicodeScalars.lexicographicallyPrecedes(rhs.name.unicodeScalars)
            }
            #expect(
                read.map(\.name) == expected.map(\.name),
                "seed \(seed) round \(round): \(probe.predicate)")
            sizes.insert(expected.count)
        }
        // The probes are not trivial: results of many different sizes.
        #expect(sizes.count > 5, "seed \(seed): result sizes \(sizes.sorted())")
    }

    private static func makeProbe(depth: Int, _ random: inout SeededRandom) -> Probe {
        let choice = Int.random(in: 0..<(depth > 0 ? 10 : 7), using: &random)
        switch choice {
        case 0:
            let age = Int16.random(in: 20...60, using: &random)
            let operators: [(CVPredicate.ComparisonOperator, (Int16, Int16) -> Bool)] = [
                (.equal, { $0 == $1 }), (.notEqual, { $0 != $1 }), (.lessThan, { $0 < $1 }),
                (.lessThanOrEqual, { $0 <= $1 }), (.greaterThan, { $0 > $1 }), (.greaterThanOrEqual, { $0 >= $1 }),
            ]
            let (op, test) = operators[Int.random(in: 0..<operators.count, using: &random)]
            return Probe(predicate: .comparison(key: "age", op, .int16(age)), reference: { test($0.age, age) })
        case 1:
            let low = Int16.random(in: 20...45, using: &random)
            let high = low + Int16.random(in: 0...15, using: &random)
            return Probe(predicate: CVPredicate.key("age").between(low, high)) { $0.age >= low && $0.age <= high }
        case 2:
            let ages = (0..<3).map { _ in Int16.random(in: 20...60, using: &random) }
            return Probe(predicate: CVPredicate.key("age").in(ages)) { ages.contains($0.age) }
        case 3:
            let position = ["Lead", "Head"][Int.random(in: 0...1, using: &random)]
            return Probe(predicate: .key("position") == position) { $0.position.map { $0 == position } }
        case 4:
            return Probe(predicate: .key("position") == nil) { $0.position == nil }
        case 5:
            let fragments = [
                "a", "A", "an", "D", "n1", "us", "İ", "i", "I", "ı", "Σ", "ς", "σ", "ǅ", "SS", "ß", "Ä", "д",
                // The lower-case letters of the Unicode 14, 16 and 17 capitals above.
                "\u{2C5F}", "\u{A7C1}", "\u{0264}", "\u{10D70}", "\u{019B}", "\u{A7CF}",
            ]
            let fragment = fragments[Int.random(in: 0..<fragments.count, using: &random)]
            let insensitive = Bool.random(using: &random)
            return Probe(predicate: CVPredicate.key("name").contains(fragment, caseInsensitive: insensitive)) {
                scalars($0.name, insensitive).contains(scalars(fragment, insensitive))
            }
        case 6:
            let prefixes = ["a", "B", "c", "d", "E", "i", "İ", "σ", "ǆ", "ä", "Д"]
            let prefix = prefixes[Int.random(in: 0..<prefixes.count, using: &random)]
            let insensitive = Bool.random(using: &random)
            return Probe(predicate: CVPredicate.key("name").beginsWith(prefix, caseInsensitive: insensitive)) {
                scalars($0.name, insensitive).starts(with: scalars(prefix, insensitive))
            }
        case 7:
            let inner = makeProbe(depth: depth - 1, &random)
            return Probe(predicate: !inner.predicate) { inner.reference($0).map { !$0 } }
        case 8:
            let left = makeProbe(depth: depth - 1, &random)
            let right = makeProbe(depth: depth - 1, &random)
            return Probe(predicate: left.predicate && right.predicate) { employee in
                let (l, r) = (left.reference(employee), right.reference(employee))
                if l == false || r == false { return false }
                return l == nil || r == nil ? nil : true
            }
        default:
            let left = makeProbe(depth: depth - 1, &random)
            let right = makeProbe(depth: depth - 1, &random)
            return Probe(predicate: left.predicate || right.predicate) { employee in
                let (l, r) = (left.reference(employee), right.reference(employee))
                if l == true || r == true { return true }
                return l == nil || r == nil ? nil : false
            }
        }
    }

    /// The scalars a match compares: lower-cased by the one definition both stores implement when
    /// case-insensitive, with the Unicode version of the ICU the tests' PostgreSQL has and `MemoryStore`'s
    /// default (checked against PostgreSQL itself by CaseFoldingServerTests).
    private static func scalars(_ text: String, _ insensitive: Bool) -> [Unicode.Scalar] {
        insensitive ? CaseFolding.lowercased(text) : Array(text.unicodeScalars)
    }
}
