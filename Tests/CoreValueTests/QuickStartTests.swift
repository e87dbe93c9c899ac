import CoreValue
import Testing

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
    #expect(adults.map(\.name) == ["Alice"])
}
