@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ
import Testing

/// `CaseFolding`, the in-memory definition of case-insensitive matching, against the server's own
/// `lower(... COLLATE "und-x-icu")`, which `PostgresStore`'s `ILIKE` uses: the same scalars for every string.
@Suite struct CaseFoldingServerTests {
    /// Letters from several scripts, with the characters whose lower-casing is special (dotted and dotless i,
    /// final sigma, titlecase digraphs, sharp s), combining marks and case-ignorable punctuation.
    static let alphabet: [String] = [
        "a", "Z", "I", "i", "İ", "ı", "\u{307}", "Σ", "σ", "ς", "Α", "ω", "Ǆ", "ǅ", "ǆ", "ß", "ẞ", "Ä", "ö", "Å",
        "Æ", "Ø", "Д", "я", "Ё", "Ω", "K", "Å", "ǰ", "Ԁ", "Ⴀ", "ᏸ", "Ａ", "ｚ", ".", "'", " ", "1", "-", "😀",
        "\u{301}", "ŉ", "İ", "Ϊ", "ΐ", "\u{2B0}", "\u{345}", "ª", "ᵃ",
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
        var random = SeededRandom(seed: 7)
        var mismatches: [String] = []
        for _ in 0..<400 {
            let length = Int(random.next() % 8) + 1
            let text = (0..<length).map { _ in Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))] }
                .joined()
            let result = try connection.query(
                #"SELECT lower($1::text COLLATE "und-x-icu")"#, [try PostgresValue(text)])
            let server = try result.decode(String.self, row: 0, column: 0)
            let local = String(String.UnicodeScalarView(CaseFolding.lowercased(text)))
            if Array(server.unicodeScalars) != Array(local.unicodeScalars) {
                mismatches.append("\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            }
        }
        #expect(
            mismatches.isEmpty,
            "seed 7: \(mismatches.count) strings lower-case differently, e.g. \(mismatches.prefix(3))")
    }
}
