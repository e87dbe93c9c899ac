@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// The change sets a context sends: what the PostgreSQL store turns into SQL.
@Test func insertsCarryEveryAttributeEverySideOfTheirLinksAndUpsertKeys() throws {
    let store = CountingStore(MemoryStore(model: ExampleModel.model))
    let context = ManagedObjectContext(store: store)
    let article = Article(
        id: 1, title: "T", text: "x", author: Author(id: "a", name: "A"), categories: [Fixtures.category("C")])
    try article.save(context)
    let changes = try #require(store.changeSets.last)
    #expect(changes.inserts.map(\.id.entityName).sorted() == ["Article", "Author", "Category"])
    #expect(changes.inserts.allSatisfy { $0.upsertKey == "id" && $0.version == nil })
    let articleInsert = try #require(changes.inserts.first { $0.id.entityName == "Article" })
    #expect(Set(articleInsert.attributes.keys) == ["id", "title", "text"])
    // Every side of every link appears: the context describes relationships, each store keeps the sides it
    // chooses (PostgreSQL: the join table of Author.articles, say, not Article.author).
    #expect(articleInsert.toOne.keys.sorted() == ["author"])
    #expect(
        Set(changes.relationships.map { "\($0.owner.entityName).\($0.relationship)" })
            == ["Author.articles", "Article.categories", "Category.articles"])
    #expect(changes.updates.isEmpty && changes.deletes.isEmpty)
}

@Test func updatesCarryOnlyChangedAttributesAndTheReadVersion() throws {
    let store = CountingStore(MemoryStore(model: ExampleModel.model))
    let context = ManagedObjectContext(store: store)
    var employee = Fixtures.employee("Ann")
    try employee.save(context)
    employee.age = 31
    try employee.save(context)
    let changes = try #require(store.changeSets.last)
    #expect(changes.inserts.isEmpty)
    #expect(changes.updates.count == 1)
    #expect(changes.updates.first?.attributes == ["age": .int16(31)])
    #expect(changes.updates.first?.version == 1)
    #expect(changes.relationships.isEmpty)
    // Saving an unchanged struct again sends nothing.
    try employee.save(context)
    #expect(store.count("apply") == 2)
}

@Test func movingAMemberSendsBothOwnersFullLists() throws {
    let store = CountingStore(MemoryStore(model: ExampleModel.model))
    let context = ManagedObjectContext(store: store)
    var first = Company(name: "One", employees: [Fixtures.employee("A"), Fixtures.employee("B")])
    try first.save(context)
    let one = try context.existingObject(with: try #require(first.objectID))
    let moved = try #require(try one.objects(forKey: "employees").first)
    let two = try context.insert(entityName: "Company")
    try two.setValue("Two", forKey: "name")
    try moved.setObject(two, forKey: "company")
    try context.save()
    let changes = try #require(store.changeSets.last)
    let lists = Dictionary(uniqueKeysWithValues: changes.relationships.map { ($0.owner, $0.members.count) })
    #expect(lists[one.objectID] == 1)
    #expect(changes.relationships.count == 2)
    #expect(changes.deletes.isEmpty)
    #expect(try one.objects(forKey: "employees").count == 1)
    #expect(try two.objects(forKey: "employees") == [moved])
}

@Test func deletesCarryTheReadVersion() throws {
    let store = CountingStore(MemoryStore(model: ExampleModel.model))
    let context = ManagedObjectContext(store: store)
    var employee = Fixtures.employee("Ann")
    try employee.save(context)
    employee.job = "Boss"
    try employee.save(context)
    try employee.delete(context)
    let changes = try #require(store.changeSets.last)
    #expect(changes.deletes.map(\.version) == [2])
}
