@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Testing

/// Which side of a relationship PostgreSQL stores its links on (`SchemaMapping.storage(of:in:)`).
@Suite struct RelationshipStorageTests {
    private func storage(_ model: ManagedObjectModel, _ entity: String, _ key: String) throws -> RelationshipStorage {
        let entity = try model.entity(entity)
        let relationship = try #require(entity.relationship(named: key))
        return SchemaMapping(model: model).storage(of: relationship, in: entity)
    }

    @Test func oneToManyIsAJoinTableOwnedByTheToManySide() throws {
        let model = ExampleModel.model
        #expect(try storage(model, "Company", "employees") == .joinTable)
        #expect(
            try storage(model, "Employee", "company") == .inverseJoinTable(entity: "Company", relationship: "employees")
        )
    }

    @Test func aToOneWithoutInverseIsAForeignKey() throws {
        #expect(try storage(ExampleModel.model, "Shop", "owner") == .foreignKey)
    }

    @Test(arguments: [("A", "B"), ("B", "A")])
    func theOrderedSideOfAManyToManyOwnsTheJoinTableWhateverTheNames(ordered: String, unordered: String) throws {
        let model = try ManagedObjectModel {
            Entity(ordered) { Relationship("items", to: unordered, .orderedToMany, inverse: "owners") }
            Entity(unordered) { Relationship("owners", to: ordered, .unorderedToMany, inverse: "items") }
        }
        #expect(try storage(model, ordered, "items") == .joinTable)
        #expect(try storage(model, unordered, "owners") == .inverseJoinTable(entity: ordered, relationship: "items"))
    }

    @Test func twoOrderedSidesEachOwnAJoinTable() throws {
        let model = try ManagedObjectModel {
            Entity("Article") { Relationship("categories", to: "Category", .orderedToMany, inverse: "articles") }
            Entity("Category") { Relationship("articles", to: "Article", .orderedToMany, inverse: "categories") }
        }
        #expect(try storage(model, "Article", "categories") == .joinTable)
        #expect(try storage(model, "Category", "articles") == .joinTable)
    }

    @Test func betweenTwoUnorderedSidesTheOneThatSortsFirstOwns() throws {
        let model = try ManagedObjectModel {
            Entity("B") { Relationship("as", to: "A", .unorderedToMany, inverse: "bs") }
            Entity("A") { Relationship("bs", to: "B", .unorderedToMany, inverse: "as") }
        }
        #expect(try storage(model, "A", "bs") == .joinTable)
        #expect(try storage(model, "B", "as") == .inverseJoinTable(entity: "A", relationship: "bs"))
    }

    @Test func oneToOneIsStoredOnceOnTheSideThatSortsFirst() throws {
        let model = try ManagedObjectModel {
            Entity("Person") { Relationship("passport", to: "Passport", inverse: "holder") }
            Entity("Passport") { Relationship("holder", to: "Person", inverse: "passport") }
        }
        #expect(try storage(model, "Passport", "holder") == .foreignKey)
        #expect(
            try storage(model, "Person", "passport") == .inverseForeignKey(entity: "Passport", relationship: "holder"))
    }

    @Test func theEmptyModelHasNoEntities() throws {
        #expect(ManagedObjectModel.empty.entities.isEmpty)
        #expect(throws: CVManagedStructError.unknownEntity("Employee")) {
            try ManagedObjectModel.empty.entity("Employee")
        }
    }
}
