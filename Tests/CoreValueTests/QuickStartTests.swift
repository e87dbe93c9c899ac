import CoreValue
import Foundation
import Testing

// The quick start of README.md, line for line; `readmeQuickStartIsThisFile` keeps the two in step.

struct Person: CVManagedPersistentStruct {
    static let EntityName = "Person"
    var objectID: ManagedObjectID?
    var name: String
    var age: Int16

    static func fromObject(_ o: ManagedObject) throws -> Person {
        try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <| "age"
    }
}

@Test func quickStart() throws {
    let model = try ManagedObjectModel {
        Entity("Person") {
            Attribute("name", .string)
            Attribute("age", .int16)
        }
    }
    let context = ManagedObjectContext(store: MemoryStore(model: model))

    var alice = Person(name: "Alice", age: 34)
    try alice.save(context)  // inserts, then writes alice.objectID back

    let adults: [Person] = try Person.query(context, predicate: .key("age") >= 18)
    let thirties = try Person.query(context, predicate: #Predicate { $0.age >= 30 && $0.age < 40 })
    #expect(adults.map(\.name) == ["Alice"])
    #expect(thirties.map(\.name) == ["Alice"])
    #expect(alice.objectID?.isTemporary == false)
}

/// Every line of README.md's quick-start block appears in this file, in the same order, so the README
/// shows code that compiles and runs.
@Test func readmeQuickStartIsThisFile() throws {
    let thisFile = URL(fileURLWithPath: #filePath)
    let readmeURL = thisFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")
    let readme = try String(contentsOf: readmeURL, encoding: .utf8)
    let section = try #require(readme.range(of: "## Quick start"), "README.md has no '## Quick start' section")
    let afterHeading = readme[section.upperBound...]
    let open = try #require(afterHeading.range(of: "```swift\n"), "the quick start has no Swift block")
    let close = try #require(afterHeading[open.upperBound...].range(of: "```"), "the Swift block is not closed")
    let readmeLines = codeLines(afterHeading[open.upperBound..<close.lowerBound])
    let testLines = codeLines(try String(contentsOf: thisFile, encoding: .utf8)[...])

    var remaining = testLines[...]
    var missing: [String] = []
    for line in readmeLines {
        if let found = remaining.firstIndex(of: line) {
            remaining = remaining[(found + 1)...]
        } else {
            missing.append(line)
        }
    }
    #expect(readmeLines.count >= 20, "the quick start shrank to \(readmeLines.count) lines")
    #expect(missing.isEmpty, "README quick-start lines missing here (or out of order): \(missing)")
}

/// The non-blank lines of a text, trimmed.
private func codeLines(_ text: Substring) -> [String] {
    text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}

/// The README's async snippet, called from the main actor (an actor-isolated caller with its own context).
@MainActor @Test func readmeAsyncSnippet() async throws {
    let model = try ManagedObjectModel {
        Entity("Person") {
            Attribute("name", .string)
            Attribute("age", .int16)
        }
    }
    let store = MemoryStore(model: model)
    func handle(_ store: MemoryStore) async throws -> [Person] {
        let context = ManagedObjectContext(store: store)  // one per request
        var bob = Person(name: "Bob", age: 41)
        try await bob.save(context)
        return try await Person.query(context, predicate: .key("age") >= 18)
    }
    let adults = try await handle(store)
    #expect(adults.map(\.name) == ["Bob"] && adults[0].objectID != nil)
}
