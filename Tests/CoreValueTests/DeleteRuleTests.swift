@_spi(StoreImplementation) import CoreValue
import Testing

/// A model exercising every delete rule: a folder cascades to its notes, a locked folder denies, tags nullify.
private func deleteRuleStore() throws -> MemoryStore {
    let model = try ManagedObjectModel {
        Entity("Folder") {
            Attribute("name", .string)
            Relationship("notes", to: "Note", .orderedToMany, inverse: "folder", deleteRule: .cascade)
            Relationship("pins", to: "Pin", .unorderedToMany, inverse: "folder", deleteRule: .deny)
        }
        Entity("Note") {
            Attribute("title", .string)
            Relationship("folder", to: "Folder", inverse: "notes")
            Relationship("tags", to: "Tag", .unorderedToMany, inverse: "notes")
        }
        Entity("Pin") {
            Attribute("label", .string)
            Relationship("folder", to: "Folder", inverse: "pins")
        }
        Entity("Tag") {
            Attribute("name", .string)
            Relationship("notes", to: "Note", .unorderedToMany, inverse: "tags")
        }
    }
    return MemoryStore(model: model)
}

private func folder(_ context: ManagedObjectContext, notes: Int, tag: ManagedObject) throws -> ManagedObject {
    let folder = try context.insert(entityName: "Folder")
    try folder.setValue("F", forKey: "name")
    var children: [ManagedObject] = []
    for index in 0..<notes {
        let note = try context.insert(entityName: "Note")
        try note.setValue("N\(index)", forKey: "title")
        try note.setObjects([tag], forKey: "tags")
        children.append(note)
    }
    try folder.setObjects(children, forKey: "notes")
    return folder
}

@Test func cascadeDeletesRelatedObjectsAndNullifiesTheRest() throws {
    let store = try deleteRuleStore()
    let context = ManagedObjectContext(store: store)
    let tag = try context.insert(entityName: "Tag")
    try tag.setValue("t", forKey: "name")
    _ = try folder(context, notes: 3, tag: tag)
    try context.save()
    #expect(store.count(of: "Note") == 3)

    let fresh = ManagedObjectContext(store: store)
    let stored = try #require(try fresh.fetch(FetchRequest(entityName: "Folder")).first)
    try fresh.delete(stored)
    #expect(fresh.deletedObjects.count == 4)
    let freshTag = try #require(try fresh.fetch(FetchRequest(entityName: "Tag")).first)
    #expect(try freshTag.objects(forKey: "notes").isEmpty)
    try fresh.save()
    #expect(store.count(of: "Folder") == 0)
    #expect(store.count(of: "Note") == 0)
    #expect(store.count(of: "Tag") == 1)
}

@Test func denyRefusesTheDeleteAndChangesNothing() throws {
    let store = try deleteRuleStore()
    let context = ManagedObjectContext(store: store)
    let tag = try context.insert(entityName: "Tag")
    try tag.setValue("t", forKey: "name")
    let folder = try folder(context, notes: 1, tag: tag)
    let pin = try context.insert(entityName: "Pin")
    try pin.setValue("p", forKey: "label")
    try pin.setObject(folder, forKey: "folder")
    try context.save()
    #expect(throws: CVManagedStructError.self) { try context.delete(folder) }
    #expect(!context.hasChanges)
    try context.delete(pin)
    try context.delete(folder)
    try context.save()
    #expect(store.count(of: "Folder") == 0)
}

@Test func deletingAnInsertedObjectForgetsIt() throws {
    let store = try deleteRuleStore()
    let context = ManagedObjectContext(store: store)
    let tag = try context.insert(entityName: "Tag")
    try tag.setValue("t", forKey: "name")
    try context.delete(tag)
    #expect(!context.hasChanges)
    try context.save()
    #expect(store.count(of: "Tag") == 0)
}

/// A folder struct over the delete-rule model: its notes cascade.
private struct FolderValue: CVManagedPersistentStruct {
    static let EntityName = "Folder"
    var objectID: ManagedObjectID?
    var name: String
    var notes: [NoteValue]
    static func fromObject(_ object: ManagedObject) throws -> FolderValue {
        try curry(self.init) <^> object <|? "objectID" <^> object <| "name" <^> object <|| "notes"
    }
}

private struct NoteValue: CVManagedStruct {
    static let EntityName = "Note"
    var title: String
    static func fromObject(_ object: ManagedObject) throws -> NoteValue {
        try curry(self.init) <^> object <| "title"
    }
}

@Test func clearingACascadingToManyDeletesItsMembers() throws {
    let store = try deleteRuleStore()
    let context = ManagedObjectContext(store: store)
    var folder = FolderValue(name: "F", notes: [NoteValue(title: "a"), NoteValue(title: "b")])
    try folder.save(context)
    #expect(store.count(of: "Note") == 2)
    folder.notes = []
    try folder.save(context)
    #expect(store.count(of: "Note") == 0)
    #expect(store.count(of: "Folder") == 1)

    // The object API too, from a fresh context; pins (deny) and tags (nullify) are only unlinked.
    let tag = try context.insert(entityName: "Tag")
    try tag.setValue("t", forKey: "name")
    let stored = try folderObject(context, folder)
    try stored.setObjects([try note(context, "c", tag)], forKey: "notes")
    try context.save()
    let fresh = ManagedObjectContext(store: store)
    try folderObject(fresh, folder).setObjects([], forKey: "notes")
    try fresh.save()
    #expect(store.count(of: "Note") == 0)
    #expect(store.count(of: "Tag") == 1)
}

private func folderObject(_ context: ManagedObjectContext, _ folder: FolderValue) throws -> ManagedObject {
    try context.existingObject(with: try #require(folder.objectID))
}

private func note(_ context: ManagedObjectContext, _ title: String, _ tag: ManagedObject) throws -> ManagedObject {
    let note = try context.insert(entityName: "Note")
    try note.setValue(title, forKey: "title")
    try note.setObjects([tag], forKey: "tags")
    return note
}

@Test func clearingACascadingToManyIsAllOrNothingWhenADenyRuleRefuses() throws {
    let model = try ManagedObjectModel {
        Entity("Shelf") {
            Attribute("name", .string)
            Relationship("boxes", to: "Box", .orderedToMany, inverse: "shelf", deleteRule: .cascade)
        }
        Entity("Box") {
            Attribute("label", .string)
            Relationship("shelf", to: "Shelf", inverse: "boxes")
            Relationship("locks", to: "Lock", .unorderedToMany, inverse: "box", deleteRule: .deny)
        }
        Entity("Lock") {
            Relationship("box", to: "Box", inverse: "locks")
        }
    }
    let context = ManagedObjectContext(store: MemoryStore(model: model))
    let shelf = try context.insert(entityName: "Shelf")
    try shelf.setValue("S", forKey: "name")
    let boxes = try (0..<3).map { index -> ManagedObject in
        let box = try context.insert(entityName: "Box")
        try box.setValue("B\(index)", forKey: "label")
        return box
    }
    try shelf.setObjects(boxes, forKey: "boxes")
    try boxes[2].setObjects([try context.insert(entityName: "Lock")], forKey: "locks")
    try context.save()

    #expect(throws: CVManagedStructError.self) { try shelf.setObjects([], forKey: "boxes") }
    // The deny rule on the last box refused the whole clear: no box was deleted, the shelf keeps all three.
    #expect(boxes.allSatisfy { !$0.isDeleted })
    #expect(try shelf.objects(forKey: "boxes").count == 3)
}

@Test func noActionLeavesTheDestinationsAloneAndTheStoreKeepsNoDanglingLink() throws {
    try NoActionSuite.check(MemoryStore(model: NoActionSuite.model))
    try NoActionSuite.checkRegistered(MemoryStore(model: NoActionSuite.model))
}
