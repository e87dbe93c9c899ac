import CoreValue
import Foundation
import Testing

/// A unique struct over an entity whose identifier attribute is not unique in the model.
private struct LooseTag: CVManagedUniqueStruct {
    static let EntityName = "LooseTag"
    static let IdentifierName = "code"
    var code: String
    var label: String
    func IdentifierValue() -> IdentifierType { code }
    static func fromObject(_ object: ManagedObject) throws -> LooseTag {
        try curry(self.init) <^> object <| "code" <^> object <| "label"
    }
}

private func looseModel() throws -> ManagedObjectModel {
    try ManagedObjectModel {
        Entity("LooseTag") {
            Attribute("code", .string)
            Attribute("label", .string)
        }
    }
}

@Test func aUniqueStructNeedsAUniqueIdentifierAttribute() throws {
    let store = MemoryStore(model: try looseModel())
    let context = ManagedObjectContext(store: store)
    let expected = CVManagedStructError.invalidModel(
        entity: "LooseTag", key: "code",
        message: "LooseTag is identified by 'code', which the model does not mark unique: true")
    #expect(throws: expected) { try LooseTag(code: "a", label: "1").save(context) }
    #expect(throws: expected) { try [LooseTag(code: "a", label: "1")].saveAll(context) }
    #expect(throws: expected) { try LooseTag(code: "a", label: "1").toObject(nil) }
    #expect(!context.hasChanges)
    #expect(store.count(of: "LooseTag") == 0)
}
