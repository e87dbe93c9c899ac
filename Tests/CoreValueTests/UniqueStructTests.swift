@_spi(StoreImplementation) import CoreValue
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
    // Without a context the entity comes from the struct itself, whose identifier is unique by definition.
    #expect(try LooseTag(code: "a", label: "1").toObject(nil).value(forKey: "code", as: String.self) == "a")
    #expect(!context.hasChanges)
    #expect(store.count(of: "LooseTag") == 0)
}

/// A team, unique by code, with persistent members.
private struct TeamValue: CVManagedUniqueStruct {
    static let EntityName = "Team"
    static let IdentifierName = "code"
    var code: String
    var name: String
    var members: [MemberValue]
    func IdentifierValue() -> IdentifierType { code }
    static func fromObject(_ object: ManagedObject) throws -> TeamValue {
        try curry(self.init) <^> object <| "code" <^> object <| "name" <^> object <|| "members"
    }
}

private struct MemberValue: CVManagedPersistentStruct {
    static let EntityName = "Member"
    var objectID: ManagedObjectID?
    var name: String
    static func fromObject(_ object: ManagedObject) throws -> MemberValue {
        try curry(self.init) <^> object <|? "objectID" <^> object <| "name"
    }
}

private func teamModel() throws -> ManagedObjectModel {
    try ManagedObjectModel {
        Entity("Team") {
            Attribute("code", .string, unique: true)
            Attribute("name", .string)
            Relationship("members", to: "Member", .orderedToMany, inverse: "team")
        }
        Entity("Member") {
            Attribute("name", .string)
            Relationship("team", to: "Team", inverse: "members")
        }
    }
}

@Test func aFailedUniqueBoxingLeavesTheObjectVersionChecked() throws {
    let store = MemoryStore(model: try teamModel())
    try TeamValue(code: "t", name: "Team", members: []).save(ManagedObjectContext(store: store))
    let context = ManagedObjectContext(store: store)
    let team = try #require(try context.fetch(FetchRequest(entityName: "Team")).first)
    let stale = MemberValue(objectID: .permanent("Member", 999), name: "gone")
    #expect(throws: CVManagedStructError.self) {
        try TeamValue(code: "t", name: "Boxed", members: [stale]).save(context)
    }
    try team.setValue("Mine", forKey: "name")
    let other = ManagedObjectContext(store: store)
    try TeamValue(code: "t", name: "Theirs", members: []).save(other)
    #expect {
        try context.save()
    } throws: { error in
        CVManagedStructError.conflict ~= error
    }
}

@Test func aSavedUniqueObjectIsVersionCheckedWhenChangedLater() throws {
    let store = MemoryStore(model: try teamModel())
    let context = ManagedObjectContext(store: store)
    let team = try TeamValue(code: "t", name: "Team", members: []).toObject(context)
    try context.save()
    try team.setValue("Mine", forKey: "name")
    try TeamValue(code: "t", name: "Theirs", members: []).save(ManagedObjectContext(store: store))
    #expect {
        try context.save()
    } throws: { error in
        CVManagedStructError.conflict ~= error
    }
}
