@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// Unboxing reads an attribute by name, trying first the position after the last one read (a struct's fields
/// usually follow the entity's order). Any order, repeats, nulls and unknown keys must still read right.
@Suite struct UnboxingReadOrderTests {
    static let model = Result {
        try ManagedObjectModel([
            Entity("Row") {
                Attribute("a", .string)
                Attribute("b", .int64)
                Attribute("c", .string, optional: true)
                Attribute("a_long_attribute_name_past_the_small_string_size", .string)
            }
        ])
    }

    /// The seed's unboxing errors: `NSError`s in `CVErrorDomain`.
    static func isUnboxingError(_ error: any Error, saying text: String) -> Bool {
        let error = error as NSError
        return error.domain == CVErrorDomain && error.localizedDescription.contains(text)
    }

    @Test func readsInAnyOrderFindTheirOwnValues() throws {
        let context = ManagedObjectContext(store: MemoryStore(model: try Self.model.get()))
        let object = try context.insert(entityName: "Row")
        try object.setValue(.string("first"), forKey: "a")
        try object.setValue(.int64(2), forKey: "b")
        try object.setValue(.string("long"), forKey: "a_long_attribute_name_past_the_small_string_size")

        // In order, out of order, repeated, after a miss.
        #expect(try object <| "a" as String == "first")
        #expect(try object <| "b" as Int64 == 2)
        #expect(try object <|? "c" as String? == nil)
        #expect(try object <| "a_long_attribute_name_past_the_small_string_size" as String == "long")
        #expect(try object <| "b" as Int64 == 2)
        #expect(try object <| "b" as Int64 == 2)
        #expect(try object <| "a" as String == "first")
        #expect { try object <| "missing" as String } throws: { Self.isUnboxingError($0, saying: "no such key") }
        #expect(try object <| "a_long_attribute_name_past_the_small_string_size" as String == "long")
        #expect(try object <| "a" as String == "first")
        // A read of the wrong type at the hinted position is still a type error.
        #expect { try object <| "b" as String } throws: { Self.isUnboxingError($0, saying: "found int64") }
    }
}
