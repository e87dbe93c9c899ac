@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `AttributeValues` reads like a dictionary whatever its layout, and a context's change sets share the
/// entity's layout (positions, not names).
@Suite struct AttributeValuesTests {
    let layout = AttributeLayout(names: ["id", "name", "age"])

    @Test func readsAndWritesLikeADictionary() {
        var values = AttributeValues(layout: layout)
        #expect(values.isEmpty && values["id"] == nil)
        values["name"] = .string("Ann")
        values["age"] = .null
        #expect(values.count == 2 && values.keys == ["name", "age"])
        #expect(values["name"] == .string("Ann") && values["age"] == .null && values["id"] == nil)
        values["age"] = nil
        #expect(values.count == 1 && values.keys == ["name"])
        // A name the layout lacks extends it (a new layout: the shared one is not changed).
        values["nickname"] = .string("A")
        #expect(values["nickname"] == .string("A") && values.count == 2)
        #expect(layout.names == ["id", "name", "age"] && values.layout.names.last == "nickname")
        #expect(values.dictionary == ["name": .string("Ann"), "nickname": .string("A")])
        #expect(values[at: 1] == .string("Ann"))
    }

    @Test func equalityAndHashingIgnoreTheLayout() {
        let positional = AttributeValues(layout: layout, values: [.int64(1), .string("Ann"), .null])
        let literal: AttributeValues = ["age": .null, "name": .string("Ann"), "id": .int64(1)]
        #expect(positional == literal && positional.hashValue == literal.hashValue)
        #expect(positional.isComplete && !AttributeValues(layout: layout).isComplete)
        var other = literal
        other["age"] = .int16(3)
        #expect(positional != other)
        other["age"] = nil
        #expect(positional != other)
        // Text compares by bytes, as AttributeValue does.
        let composed: AttributeValues = ["name": .string("\u{E9}")]
        let decomposed: AttributeValues = ["name": .string("e\u{301}")]
        #expect(composed != decomposed)
    }

    @Test func arrangingMovesValuesToAnotherLayoutOrNamesTheUnknownKey() throws {
        let literal: AttributeValues = ["age": .int16(4), "id": .int64(1)]
        let (arranged, unknown) = literal.arranged(as: layout)
        let values = try #require(arranged)
        #expect(unknown == nil && values.layout === layout && values[at: 0] == .int64(1) && values[at: 2] == .int16(4))
        #expect(values[at: 1] == nil)
        let (none, missing) = AttributeValues(["colour": .string("red")]).arranged(as: layout)
        #expect(none == nil && missing == "colour")
    }

    @Test func mergeAndKeeping() {
        var base = AttributeValues(layout: layout, values: [.int64(1), .string("Ann"), .int16(30)])
        base.merge(["name": .string("Bob")])
        #expect(base["name"] == .string("Bob") && base.count == 3)
        let kept = base.keeping(["id", "age"])
        #expect(kept.keys == ["id", "age"] && kept.layout === layout)
        #expect(AttributeValues(layout: layout).merging(kept) == kept)
        #expect(base.description == #"["age": int16(30), "id": int64(1), "name": string("Bob")]"#)
    }

    @Test func aContextSendsItsChangesInTheEntitysLayout() throws {
        let store = CountingStore(MemoryStore(model: ExampleModel.model))
        let context = ManagedObjectContext(store: store)
        try Fixtures.category("C").save(context)
        let insert = try #require(store.changeSets.last?.inserts.first)
        let entity = try #require(ExampleModel.model.entities.first { $0.name == "Category" })
        #expect(insert.attributes.layout.names == entity.attributes.map(\.name))
        #expect(insert.attributes.isComplete)
    }
}
