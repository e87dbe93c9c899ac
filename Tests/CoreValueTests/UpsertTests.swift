@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// A profile struct that has no `bio`: its upserts must leave an existing row's `bio` alone.
private struct ProfileName: CVManagedUniqueStruct {
    static let EntityName = "Profile"
    static let IdentifierName = "id"
    var id: String
    var name: String
    func IdentifierValue() -> IdentifierType { id }
    static func fromObject(_ object: ManagedObject) throws -> ProfileName {
        try curry(self.init) <^> object <| "id" <^> object <| "name"
    }
}

private func profileModel() throws -> ManagedObjectModel {
    try ManagedObjectModel {
        Entity("Profile") {
            Attribute("id", .string, unique: true)
            Attribute("name", .string)
            Attribute("bio", .string, optional: true)
            Attribute("visits", .int32, defaultValue: .int32(7))
        }
    }
}

/// Inserts a full profile row from its own context.
private func insertProfile(_ store: any Store, id: String, bio: String, visits: Int32) throws {
    let context = ManagedObjectContext(store: store)
    let row = try context.insert(entityName: "Profile")
    try row.setValue(id, forKey: "id")
    try row.setValue("full", forKey: "name")
    try row.setValue(bio, forKey: "bio")
    try row.setValue(visits, forKey: "visits")
    try context.save()
}

private func profile(_ store: any Store, _ id: String) throws -> ManagedObject {
    let request = FetchRequest(entityName: "Profile", predicate: .key("id") == id)
    return try #require(try ManagedObjectContext(store: store).fetch(request).first)
}

@Test func anUpsertLeavesColumnsTheStructLacksAlone() throws {
    let store = MemoryStore(model: try profileModel())
    let early = ManagedObjectContext(store: store)
    try ProfileName(id: "a", name: "from struct").toObject(early)
    try insertProfile(store, id: "a", bio: "hello", visits: 3)
    try early.save()
    #expect(store.count(of: "Profile") == 1)
    let row = try profile(store, "a")
    #expect(try row.value(forKey: "name", as: String.self) == "from struct")
    #expect(try row.value(forKey: "bio", as: String.self) == "hello")
    #expect(try row.value(forKey: "visits", as: Int32.self) == 3)
}

@Test func anUpsertSendsWhatWasSetLaterAndANewRowGetsDefaults() throws {
    let store = CountingStore(MemoryStore(model: try profileModel()))
    let early = ManagedObjectContext(store: store)
    let object = try ProfileName(id: "a", name: "from struct").toObject(early)
    try object.setValue("set later", forKey: "bio")
    try ProfileName(id: "b", name: "new").toObject(early)
    try insertProfile(store, id: "a", bio: "hello", visits: 3)
    try early.save()
    let inserts = try #require(store.changeSets.last?.inserts)
    #expect(inserts.map { Set($0.attributes.keys) } == [["id", "name", "bio"], ["id", "name"]])
    #expect(try profile(store, "a").value(forKey: "bio", as: String.self) == "set later")
    #expect(try profile(store, "a").value(forKey: "visits", as: Int32.self) == 3)
    #expect(try profile(store, "b").value(forKey: "bio", as: String.self) == nil)
    #expect(try profile(store, "b").value(forKey: "visits", as: Int32.self) == 7)
}
