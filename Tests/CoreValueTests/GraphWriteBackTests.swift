@_spi(StoreImplementation) import CoreValue
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

/// A unique struct's save sends its owned links with its whole tuple: a row never ends with one writer's
/// name and another's foreign key.
@Suite struct WholeStructLinkTests {
    struct Office: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Office"
        static let IdentifierName = "code"
        func IdentifierValue() -> IdentifierType { code }
        var code: String
        static func fromObject(_ o: ManagedObject) throws -> Office { try curry(self.init) <^> o <| "code" }
    }

    struct Desk: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Desk"
        static let IdentifierName = "key"
        func IdentifierValue() -> IdentifierType { key }
        var key: String
        var label: String
        var office: Office?
        static func fromObject(_ o: ManagedObject) throws -> Desk {
            try curry(self.init) <^> o <| "key" <^> o <| "label" <^> o <|? "office"
        }
    }

    @Test func theForeignKeyGoesWithTheWholeStruct() throws {
        let model = try ManagedObjectModel {
            Entity("Office") { Attribute("code", .string, unique: true) }
            Entity("Desk") {
                Attribute("key", .string, unique: true)
                Attribute("label", .string)
                Relationship("office", to: "Office")
            }
        }
        let store = MemoryStore(model: model)
        let o1 = Office(code: "O1")
        let o2 = Office(code: "O2")
        try Desk(key: "d", label: "n1", office: o1).save(ManagedObjectContext(store: store))
        let a = ManagedObjectContext(store: store)
        _ = try Desk.query(a, predicate: nil) as [Desk]
        try Desk(key: "d", label: "n2", office: o2).save(ManagedObjectContext(store: store))
        // A still holds office O1 as read; its struct says O1 again and a new label.
        try Desk(key: "d", label: "n3", office: o1).save(a)
        let read: [Desk] = try Desk.query(ManagedObjectContext(store: store), predicate: nil)
        #expect(read == [Desk(key: "d", label: "n3", office: o1)])
    }
}
