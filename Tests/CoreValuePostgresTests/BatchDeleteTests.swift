@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// Batch deletes (issue 32, point 2, the delete half): every row a predicate matches deleted with the
/// entity's delete rules (cascade, deny, nullify), the same on both stores; on PostgreSQL in one statement
/// when the database can apply the rules, through a context otherwise; the calling context forgets what went.
@Suite struct BatchDeleteTests {
    /// Projects cascade to folders, folders cascade to notes, users deny the delete while they own folders,
    /// tags and notes link many-to-many (nullify both ways).
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Project") {
                Attribute("name", .string)
                Relationship("folders", to: "Folder", .unorderedToMany, inverse: "project", deleteRule: .cascade)
            }
            Entity("User") {
                Attribute("name", .string)
                Relationship("folders", to: "Folder", .unorderedToMany, inverse: "owner", deleteRule: .deny)
            }
            Entity("Folder") {
                Attribute("name", .string)
                Relationship("project", to: "Project", inverse: "folders")
                Relationship("owner", to: "User", inverse: "folders")
                Relationship("notes", to: "Note", .unorderedToMany, inverse: "folder", deleteRule: .cascade)
            }
            Entity("Note") {
                Attribute("title", .string)
                Relationship("folder", to: "Folder", inverse: "notes")
                Relationship("tags", to: "Tag", .unorderedToMany, inverse: "notes")
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("notes", to: "Note", .unorderedToMany, inverse: "tags")
            }
            // A tree: deleting a topic deletes its subtopics, at any depth.
            Entity("Topic") {
                Attribute("name", .string)
                Relationship("children", to: "Topic", .unorderedToMany, inverse: "parent", deleteRule: .cascade)
                Relationship("parent", to: "Topic", inverse: "children")
            }
        }
    }

    /// One project with folders "old a" (2 notes, owned by ann) and "new b" (1 note); bob owns nothing; a tag
    /// on every note.
    static func seed(_ store: any Store) throws {
        let context = ManagedObjectContext(store: store)
        func object(_ entity: String, _ key: String, _ name: String) throws -> ManagedObject {
            let object = try context.insert(entityName: entity)
            try object.setValue(.string(name), forKey: key)
            return object
        }
        let project = try object("Project", "name", "p")
        let ann = try object("User", "name", "ann")
        _ = try object("User", "name", "bob")
        let tag = try object("Tag", "name", "t")
        let old = try object("Folder", "name", "old a")
        let new = try object("Folder", "name", "new b")
        try old.setObject(ann, forKey: "owner")
        try project.setObjects([old, new], forKey: "folders")
        var notes: [ManagedObject] = []
        for (folder, title) in [(old, "n1"), (old, "n2"), (new, "n3")] {
            let note = try object("Note", "title", title)
            try note.setObject(folder, forKey: "folder")
            notes.append(note)
        }
        try tag.setObjects(notes, forKey: "notes")
        try context.save()
    }

    static func count(_ store: any Store, _ entity: String) throws -> Int {
        try ManagedObjectContext(store: store).count(for: FetchRequest(entityName: entity))
    }

    static func names(_ store: any Store, _ entity: String, _ key: String) throws -> [String] {
        try ManagedObjectContext(store: store).fetch(FetchRequest(entityName: entity)).compactMap { object in
            String(attributeValue: try object.value(forKey: key))
        }.sorted()
    }

    static func exercise(_ store: any Store) throws {
        try seed(store)
        // A context holding what the batch deletes, and the tag whose links it clears.
        let watcher = ManagedObjectContext(store: store)
        let watchedNotes = try watcher.fetch(FetchRequest(entityName: "Note"))
        let watchedTag = try #require(try watcher.fetch(FetchRequest(entityName: "Tag")).first)
        #expect(try watchedTag.objects(forKey: "notes").count == 3)

        // Folders cascade to their notes: one statement on PostgreSQL.
        let folders = try watcher.batchDelete(
            BatchDeleteRequest(
                entityName: "Folder", predicate: CVPredicateKey.key("name").beginsWith("old"),
                returnsObjectIDs: true))
        #expect(folders.count == 1)
        #expect(folders.objectIDs?.count == 1)
        #expect(try names(store, "Folder", "name") == ["new b"])
        #expect(try names(store, "Note", "title") == ["n3"])
        #expect(try names(store, "Tag", "name") == ["t"])
        #expect(try names(store, "User", "name") == ["ann", "bob"])
        // The watching context forgot the deleted notes and reads the tag's links again.
        #expect(watchedNotes.filter(\.isDeleted).count == 2)
        #expect(watcher.registeredObjects(entityName: "Note").count == 1)
        #expect(try watchedTag.objects(forKey: "notes").count == 1)

        // A user who still owns folders is denied, and nothing is deleted; one who owns none goes.
        try seed(store)
        let denied = #expect(throws: CVManagedStructError.self) {
            _ = try ManagedObjectContext(store: store).batchDelete(BatchDeleteRequest(entityName: "User"))
        }
        #expect(denied?.code == .constraintViolation)
        #expect(denied?.key == "folders")
        #expect(try count(store, "User") == 4)
        let bobs = try ManagedObjectContext(store: store).batchDelete(
            BatchDeleteRequest(entityName: "User", predicate: .key("name") == "bob"))
        #expect(bobs == BatchResult(count: 2))

        // A tree of topics (a cascade back to its own entity): deleted through a context, at every depth.
        let topics = ManagedObjectContext(store: store)
        var parent: ManagedObject?
        for depth in 0..<4 {
            let topic = try topics.insert(entityName: "Topic")
            try topic.setValue(.string(depth == 0 ? "root" : "level \(depth)"), forKey: "name")
            try topic.setObject(parent, forKey: "parent")
            parent = topic
        }
        let other = try topics.insert(entityName: "Topic")
        try other.setValue(.string("other"), forKey: "name")
        try topics.save()
        let tree = try ManagedObjectContext(store: store).batchDelete(
            BatchDeleteRequest(entityName: "Topic", predicate: .key("name") == "root"))
        #expect(tree == BatchResult(count: 1))
        #expect(try names(store, "Topic", "name") == ["other"])

        // Projects cascade to folders that cascade again: the database follows both levels.
        let projects = try ManagedObjectContext(store: store).batchDelete(BatchDeleteRequest(entityName: "Project"))
        #expect(projects == BatchResult(count: 2))
        #expect(try count(store, "Folder") == 0)
        #expect(try count(store, "Note") == 0)
        #expect(try count(store, "Tag") == 2)
        #expect(try names(store, "User", "name") == ["ann", "ann"])
        // Nothing left to match: nothing deleted.
        #expect(try ManagedObjectContext(store: store).batchDelete(BatchDeleteRequest(entityName: "Folder")).count == 0)
    }

    @Test func memoryStoreBatchDeletes() async throws {
        let store = MemoryStore(model: try Self.model())
        try Self.exercise(store)
        #expect(
            try await ManagedObjectContext(store: store).batchDelete(BatchDeleteRequest(entityName: "User")).count == 2)
    }

    @Test func postgresBatchDeletesWithTheDeleteRules() async throws {
        guard TestDatabase.isAvailable(#function) else { return }
        try await TestSchema.with(model: try Self.model()) { schema in
            try Self.exercise(schema.store)
            #expect(
                try await ManagedObjectContext(store: schema.store).batchDelete(BatchDeleteRequest(entityName: "User"))
                    .count == 2)
            // A delete the database can carry out is one statement in its transaction.
            try Self.seed(schema.store)
            let before = schema.store.statistics
            let result = try await ManagedObjectContext(store: schema.store).batchDelete(
                BatchDeleteRequest(entityName: "Folder", predicate: .key("name") == "new b"))
            #expect(result.count == 1)
            let cost = schema.store.statistics.since(before)
            // The DELETE and the commit identifier (BEGIN and COMMIT go with them and are not counted).
            #expect(cost.statements == 2)
            // Two levels of cascades (project, folders, notes) in one statement too, asked for the IDs.
            let start = schema.store.statistics
            let projects = try await ManagedObjectContext(store: schema.store).batchDelete(
                BatchDeleteRequest(entityName: "Project", returnsObjectIDs: true))
            #expect(projects.count == 1 && projects.objectIDs?.count == 1)
            #expect(schema.store.statistics.since(start).statements == 2)
            #expect(try Self.count(schema.store, "Note") == 0)
        }
    }
}
