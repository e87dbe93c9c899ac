@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

private func employeeAttributes(_ name: String) -> AttributeValues {
    ["name": .string(name), "age": .int16(30), "department": .string("D"), "job": .string("J")]
}

@Test func applyIsAllOrNothing() throws {
    let store = MemoryStore(model: ExampleModel.model)
    let insert = ObjectChange(id: .temporary("Employee"), attributes: employeeAttributes("Ann"))
    let missing = ObjectChange(id: .permanent("Employee", 42), version: 1, attributes: ["name": .string("X")])
    #expect {
        try store.apply(ChangeSet(inserts: [insert], updates: [missing]))
    } throws: { error in
        guard let error = error as? CVManagedStructError else { return false }
        return error.code == .conflict && error.entity == "Employee"
    }
    #expect(store.count(of: "Employee") == 0)
    // The key sequence was rolled back too: the next insert gets key 1.
    let result = try store.apply(ChangeSet(inserts: [insert]))
    #expect(result.permanentIDs[insert.id] == .permanent("Employee", 1))
}

@Test func staleVersionsConflict() throws {
    let store = MemoryStore(model: ExampleModel.model)
    let insert = ObjectChange(id: .temporary("Employee"), attributes: employeeAttributes("Ann"))
    let id = try #require(try store.apply(ChangeSet(inserts: [insert])).permanentIDs[insert.id])
    let update = ObjectChange(id: id, version: 1, attributes: ["job": .string("K")])
    #expect(try store.apply(ChangeSet(updates: [update])).versions[id] == 2)
    #expect(throws: CVManagedStructError.self) { try store.apply(ChangeSet(updates: [update])) }
    #expect(throws: CVManagedStructError.self) {
        try store.apply(ChangeSet(deletes: [ObjectDeletion(id: id, version: 1)]))
    }
    _ = try store.apply(ChangeSet(deletes: [ObjectDeletion(id: id, version: 2)]))
    #expect(store.count(of: "Employee") == 0)
}

@Test func uniqueValuesConflictUnlessUpserted() throws {
    let store = MemoryStore(model: ExampleModel.model)
    let first = ObjectChange(id: .temporary("Author"), attributes: ["id": .string("a"), "name": .string("A")])
    _ = try store.apply(ChangeSet(inserts: [first]))
    let duplicate = ObjectChange(id: .temporary("Author"), attributes: ["id": .string("a"), "name": .string("B")])
    #expect(
        throws: CVManagedStructError.constraintViolation(
            entity: "Author", key: "id", message: "duplicate value for a unique attribute")
    ) {
        try store.apply(ChangeSet(inserts: [duplicate]))
    }
    var upsert = duplicate
    upsert.upsertKey = "id"
    let result = try store.apply(ChangeSet(inserts: [upsert]))
    #expect(result.permanentIDs[upsert.id] == .permanent("Author", 1))
    #expect(result.versions[.permanent("Author", 1)] == 2)
    let rows = try store.fetch(entityName: "Author", key: "id", values: [.string("a")])
    #expect(rows.map { $0.attributes["name"] } == [.string("B")])
}

@Test func snapshotsCarryRelationshipsOnBothSides() throws {
    let store = MemoryStore(model: ExampleModel.model)
    let company = ObjectChange(id: .temporary("Company"), attributes: ["name": .string("C")])
    let first = ObjectChange(id: .temporary("Employee"), attributes: employeeAttributes("A"))
    let second = ObjectChange(id: .temporary("Employee"), attributes: employeeAttributes("B"))
    _ = try store.apply(
        ChangeSet(
            inserts: [company, first, second],
            relationships: [
                RelationshipChange(owner: company.id, relationship: "employees", members: [second.id, first.id])
            ]
        ))
    let companies = try store.fetch(FetchRequest(entityName: "Company"))
    #expect(companies.first?.toMany["employees"] == [2, 1])
    let employees = try store.fetch(FetchRequest(entityName: "Employee", sortDescriptors: [.init(key: "name")]))
    #expect(employees.map { $0.toOne["company"] ?? nil } == [1, 1])
}

@Test func linksToMissingRowsAreRejected() throws {
    let store = MemoryStore(model: ExampleModel.model)
    let company = ObjectChange(id: .temporary("Company"), attributes: ["name": .string("C")])
    let change = RelationshipChange(
        owner: company.id, relationship: "employees", members: [.permanent("Employee", 7)])
    #expect(throws: CVManagedStructError.self) {
        try store.apply(ChangeSet(inserts: [company], relationships: [change]))
    }
    #expect(store.count(of: "Company") == 0)
}

@Test func storeCallsValidateBeforeWorking() throws {
    let store = MemoryStore(model: ExampleModel.model)
    #expect(throws: CVManagedStructError.unknownEntity("Nope")) { try store.fetch(FetchRequest(entityName: "Nope")) }
    #expect(throws: CVManagedStructError.unknownEntity("Nope")) { try store.fetch(ids: [.permanent("Nope", 1)]) }
    #expect(throws: CVManagedStructError.unknownKey(entity: "Author", key: "nope")) {
        try store.fetch(entityName: "Author", key: "nope", values: [])
    }
    #expect(throws: CVManagedStructError.self) {
        try store.fetch(entityName: "Author", key: "id", values: [.int64(1)])
    }
    #expect(throws: CVManagedStructError.missingValue(entity: "Employee", key: "age")) {
        try store.apply(
            ChangeSet(inserts: [ObjectChange(id: .temporary("Employee"), attributes: ["name": .string("A")])]))
    }
    #expect(try store.fetch(ids: [.permanent("Employee", 5), .temporary("Employee")]).isEmpty)
}

@Test func contextsOnManyThreadsShareOneStore() throws {
    let store = MemoryStore(model: ExampleModel.model)
    DispatchQueue.concurrentPerform(iterations: 8) { worker in
        let context = ManagedObjectContext(store: store)
        for index in 0..<25 {
            _ = try? Author(id: "w\(worker)-\(index)", name: "A").toObject(context)
            _ = try? Author(id: "shared-\(index)", name: "A").toObject(context)
        }
        try? context.save()
    }
    #expect(store.count(of: "Author") == 8 * 25 + 25)
}

@Test func tenThousandUniqueStructsBoxInOneLookupAndOneApply() throws {
    let store = CountingStore(MemoryStore(model: ExampleModel.model))
    let context = ManagedObjectContext(store: store)
    let products = (0..<10_000).map { Product(id: Int32($0), name: "P\($0)", price: Decimal($0)) }
    try products.toObjects(context)
    #expect(store.count("fetchValues") == 1)
    try context.save()
    #expect(store.count("apply") == 1)
    // saveAll of a flat entity's whole structs needs no lookup: the upsert decides, in the same apply.
    store.reset()
    let renamed = products.map { Product(id: $0.id, name: "R\($0.id)", price: $0.price) }
    try renamed.saveAll(ManagedObjectContext(store: store))
    #expect(store.count("fetchValues") == 0)
    #expect(store.count("apply") == 1)
    #expect(try Fixtures.count(store, "Product") == 10_000)
    let renamedRead: [Product] = try Product.query(
        ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "id")])
    #expect(renamedRead == renamed)
    try products.saveAll(ManagedObjectContext(store: store))
    let read: [Product] = try Product.query(
        ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "id")])
    #expect(read == products)
}

@Test func tenThousandArticlesOfOneAuthorBoxAndUnboxInBatches() throws {
    let store = CountingStore(MemoryStore(model: ExampleModel.model))
    let author = Author(id: "a", name: "Ann")
    let articles = (0..<10_000).map {
        Article(id: Int64($0), title: "T\($0)", text: "", author: author, categories: [])
    }
    try articles.saveAll(ManagedObjectContext(store: store))
    #expect(store.count("fetchValues") == 2)
    #expect(store.count("apply") == 1)
    store.reset()
    let read: [Article] = try Article.query(
        ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [.init(key: "id")])
    #expect(read == articles)
    #expect(store.count("fetch") == 1)
    #expect(store.count("fetchIDs") == 1)
}
