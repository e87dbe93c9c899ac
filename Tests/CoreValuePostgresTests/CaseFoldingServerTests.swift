@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

/// `CaseFolding`, the in-memory definition of case-insensitive matching, against the server's own
/// `lower(... COLLATE "und-x-icu")`, which `PostgresStore`'s `ILIKE` uses: the same scalars for every string.
@Suite struct CaseFoldingServerTests {
    /// Letters from several scripts, with the characters whose lower-casing is special (dotted and dotless i,
    /// final sigma, titlecase digraphs, sharp s), combining marks and case-ignorable punctuation.
    static let alphabet: [String] = [
        "a", "Z", "I", "i", "İ", "ı", "\u{307}", "Σ", "σ", "ς", "Α", "ω", "Ǆ", "ǅ", "ǆ", "ß", "ẞ", "Ä", "ö", "Å",
        "Æ", "Ø", "Д", "я", "Ё", "Ω", "K", "Å", "ǰ", "Ԁ", "Ⴀ", "ᏸ", "Ａ", "ｚ", ".", "'", " ", "1", "-", "😀",
        "\u{301}", "ŉ", "İ", "Ϊ", "ΐ", "\u{2B0}", "\u{345}", "ª", "ᵃ",
        // Capitals and their lower-case letters from Unicode 14 (U+2C2F, U+A7C0, U+10570), 16 (U+A7CB, U+1C89,
        // U+A7DC, U+10D50) and 17 (U+A7CE, U+16EA0): mapped only by an ICU of that version or later.
        "\u{2C2F}", "\u{2C5F}", "\u{A7C0}", "\u{10570}", "\u{A7CB}", "\u{0264}", "\u{1C89}", "\u{A7DC}",
        "\u{10D50}", "\u{10D70}", "\u{A7CE}", "\u{16EA0}",
    ]

    @Test func lowerCasingAgreesWithTheServersICURootCollation() throws {
        guard let url = ProcessInfo.processInfo.environment["DATABASE_URL"], !url.isEmpty else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("DATABASE_URL is not set; this integration test cannot run in CI")
            }
            return
        }
        let connection = try Connection(url)
        defer { connection.close() }
        // The mapping of the Unicode version the server's case collation has, as PostgresStore reads it.
        let collation = CaseCollation()
        let folding = CaseFolding(
            unicodeVersion: try #require(try ServerCaseMapping.read(on: connection, keepingCollationIn: collation)))
        var random = SeededRandom(seed: 7)
        var mismatches: [String] = []
        for _ in 0..<400 {
            let length = Int(random.next() % 8) + 1
            let text = (0..<length).map { _ in Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))] }
                .joined()
            let result = try connection.query(ServerCaseMapping.sql(collation.name), [try PostgresValue(text)])
            let server = try result.decode(String.self, row: 0, column: 0)
            let local = String(String.UnicodeScalarView(folding.lowercased(text)))
            if Array(server.unicodeScalars) != Array(local.unicodeScalars) {
                mismatches.append("\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            }
        }
        #expect(
            mismatches.isEmpty,
            "seed 7: \(mismatches.count) strings lower-case differently, e.g. \(mismatches.prefix(3))")
    }
}

/// How `PostgresStore` tells which Unicode version its server's ICU lower-cases as.
@Suite struct ServerCaseMappingTests {
    @Test(arguments: [
        // ICU 72-74 (Unicode 15.0, 15.1): the letters of 11 to 14 mapped, 16 and 17 not.
        ("\u{10D0}\u{A7BB}\u{A7C8}\u{2C5F}\u{A7CB}\u{A7CE}", 15, 1),
        // ICU 76 (Unicode 16).
        ("\u{10D0}\u{A7BB}\u{A7C8}\u{2C5F}\u{0264}\u{A7CE}", 16, 0),
        // Every probe mapped.
        ("\u{10D0}\u{A7BB}\u{A7C8}\u{2C5F}\u{0264}\u{A7CF}", 17, 0),
        // An ICU of Unicode 12.x.
        ("\u{10D0}\u{A7BB}\u{A7C7}\u{2C2F}\u{A7CB}\u{A7CE}", 12, 1),
        // Nothing mapped: older than Unicode 11.
        ("\u{1C90}\u{A7BA}\u{A7C7}\u{2C2F}\u{A7CB}\u{A7CE}", 10, 0),
    ])
    func theVersionIsTheLastReleaseBeforeTheFirstLetterLeftAsItIs(lowered: String, major: Int, minor: Int) {
        let version = ServerCaseMapping.version(lowered: lowered)
        #expect(version.major == major && version.minor == minor)
    }

    @Test func theStoreReadsItsServersVersionAndMatchesPendingObjectsWithIt() throws {
        try TestDatabase.withExampleStore { store, url, _ in
            let version = store.caseMappingVersion
            // The server lower-cases as CaseFolding does with that version (the randomized check above uses it).
            let connection = try Connection(url)
            defer { connection.close() }
            let probe = try connection.query(
                ServerCaseMapping.sql(store.fetchStatements.caseCollation.name),
                [try PostgresValue(ServerCaseMapping.text)])
            let server = try probe.decode(String.self, row: 0, column: 0)
            #expect(
                Array(server.unicodeScalars) == CaseFolding(unicodeVersion: version).lowercased(ServerCaseMapping.text))
        }
    }
}
