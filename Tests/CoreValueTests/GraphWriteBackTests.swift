import CoreValue
import Foundation
import Testing

/// The graph write-back after a save (`adoptSaved`) never hands back a value that boxes differently from the
/// one saved: when reading back would cut a back-reference short, only the top-level `objectID` is set.
@Suite struct GraphWriteBackTests {
    struct Parent: CVManagedPersistentStruct {
        static let EntityName = "Parent"
        var objectID: ManagedObjectID?
        var name: String
        var children: [Child]
        static func fromObject(_ o: ManagedObject) throws -> Parent {
            try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <|| "children"
        }
    }

    struct Child: CVManagedPersistentStruct {
        static let EntityName = "Child"
        var objectID: ManagedObjectID?
        var name: String
        var parent: Parent?
        static func fromObject(_ o: ManagedObject) throws -> Child {
            try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <|? "parent"
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Parent") {
                Attribute("name", .string)
                Relationship("children", to: "Child", .orderedToMany, inverse: "parent")
            }
            Entity("Child") {
                Attribute("name", .string)
                Relationship("parent", to: "Parent", inverse: "children")
            }
        }
    }

    @Test func aBackReferenceThatReadingBackWouldCutKeepsTheValueAsSaved() throws {
        let store = MemoryStore(model: try Self.model())
        let context = ManagedObjectContext(store: store)
        let sibling = Child(name: "first", parent: nil)
        var child = Child(name: "second", parent: nil)
        child.parent = Parent(name: "P", children: [sibling, Child(name: "second", parent: nil)])
        try child.save(context)
        #expect(child.objectID != nil)
        // Reading `child` back would list the parent's children without `child` itself (unboxing cuts the
        // cycle there): the saved value is kept, so the parent still lists both, in order.
        #expect(child.parent?.children.map(\.name) == ["first", "second"])
    }
}
