@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// The one definition of case-insensitive matching (`CaseFolding`): vectors checked against PostgreSQL's
/// `lower(... COLLATE "und-x-icu")` (CaseFoldingServerTests does so on a live server).
@Suite struct CaseFoldingTests {
    @Test(arguments: [
        ("ABC xyz", "abc xyz"),
        ("İstanbul", "i\u{307}stanbul"),
        ("ISPARTA ıspanak", "isparta ıspanak"),
        ("ΟΔΟΣ", "οδος".replacingOccurrences(of: "σ", with: "ς")),
        ("Σ", "σ"),
        ("ΑΣ.", "ας."),
        ("ΣΑΣ ΑΣΑ", "σας ασα"),
        ("Straße STRASSE ẞ", "straße strasse ß"),
        ("Ǆ ǅ ǆ", "ǆ ǆ ǆ"),
        ("ÄÖÜ ÅÆØ", "äöü åæø"),
        ("ДОБРО", "добро"),
        ("ΑΣʰ", "ας\u{2B0}"),
        ("ΑΣ\u{345}", "ας\u{345}"),
    ])
    func lowercasesAsICUsRootLocaleDoes(_ input: String, _ expected: String) {
        #expect(String(String.UnicodeScalarView(CaseFolding.lowercased(input))) == expected)
    }

    /// Letters assigned after the mapping's Unicode version are left as they are, as an ICU of that version
    /// leaves them: Swift's tables (Unicode 17) would lower-case them all.
    @Test func lettersNewerThanTheVersionAreLeftAsTheyAre() {
        let text = "\u{2C2F}\u{A7C0} \u{A7CB}\u{1C89}\u{A7DC}\u{10D50} \u{A7CE}"
        let lower = { (version: Unicode.Version) in
            String(String.UnicodeScalarView(CaseFolding(unicodeVersion: version).lowercased(text)))
        }
        #expect(lower((15, 0)) == "\u{2C5F}\u{A7C1} \u{A7CB}\u{1C89}\u{A7DC}\u{10D50} \u{A7CE}")
        #expect(lower((16, 0)) == "\u{2C5F}\u{A7C1} \u{0264}\u{1C8A}\u{019B}\u{10D70} \u{A7CE}")
        #expect(lower((17, 0)) == "\u{2C5F}\u{A7C1} \u{0264}\u{1C8A}\u{019B}\u{10D70} \u{A7CF}")
        #expect(lower((13, 0)) == text)
        // A final sigma after a letter the version does not know is a medial one: the letter is not cased.
        #expect(lower((15, 0)).unicodeScalars.count == text.unicodeScalars.count)
        let sigma = "\u{A7CB}\u{03A3}"
        #expect(CaseFolding(unicodeVersion: (15, 0)).lowercased(sigma) == ["\u{A7CB}", "\u{03C3}"])
        #expect(CaseFolding(unicodeVersion: (16, 0)).lowercased(sigma) == ["\u{0264}", "\u{03C2}"])
    }

    @Test func aMemoryStoreMatchesCaseInsensitivelyAsItsConfiguredVersionDoes() throws {
        let model = try ManagedObjectModel {
            Entity("Word") { Attribute("text", .string) }
        }
        for (version, matches) in [((15, 0), false), ((16, 0), true)] as [(Unicode.Version, Bool)] {
            let store = MemoryStore(model: model, caseMappingVersion: version)
            let context = ManagedObjectContext(store: store)
            let word = try context.insert(entityName: "Word")
            try word.setValue("\u{A7CB}ik", forKey: "text")
            let predicate = CVPredicate.key("text").contains("\u{0264}", caseInsensitive: true)
            // Pending in the context, then stored.
            #expect(
                try context.fetch(FetchRequest(entityName: "Word", predicate: predicate)).count == (matches ? 1 : 0))
            try context.save()
            let fresh = ManagedObjectContext(store: store)
            #expect(try fresh.fetch(FetchRequest(entityName: "Word", predicate: predicate)).count == (matches ? 1 : 0))
        }
        #expect(MemoryStore(model: model).caseMappingVersion == (15, 0))
    }
}
