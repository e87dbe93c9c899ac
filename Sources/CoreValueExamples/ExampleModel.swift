import CoreValue

/// The example model used by the demo, the tests and the documentation: employees in companies, shops
/// with an owner and products, cars with one attribute of every type, and unique authors, articles and
/// categories.
///
/// `migrations/0001_example_model.sql` is this model's DDL (`corevalue schema` prints it).
public enum ExampleModel {
    /// The model, built once. It is valid by construction (ExampleModelTests builds it with ``make()``,
    /// which throws on any mistake); were it not, this would be ``ManagedObjectModel/empty`` and every use
    /// would throw an unknown-entity error rather than trap. Code that wants the validation error calls
    /// ``make()``.
    public static let model: ManagedObjectModel = (try? make()) ?? .empty

    /// Builds and validates the model.
    ///
    /// - Throws: ``CVManagedStructError/invalidModel(entity:key:message:)`` if a declaration is wrong.
    public static func make() throws -> ManagedObjectModel { try ManagedObjectModel(entities) }

    /// The entities of the example model.
    public static let entities: [Entity] = [
        Entity("Employee") {
            Attribute("name", .string)
            Attribute("age", .int16)
            Attribute("position", .string, optional: true)
            Attribute("department", .string)
            Attribute("job", .string)
            Relationship("company", to: "Company", inverse: "employees")
        },
        Entity("Company") {
            Attribute("name", .string)
            Relationship("employees", to: "Employee", .orderedToMany, inverse: "company")
        },
        Entity("Shop") {
            Attribute("name", .string)
            Relationship("owner", to: "Employee")
            Relationship("products", to: "Product", .unorderedToMany)
        },
        Entity("Product") {
            Attribute("id", .int32, unique: true)
            Attribute("name", .string)
            Attribute("price", .decimal)
        },
        Entity("Car") {
            Attribute("name", .string)
            Attribute("kind", .string)
            Attribute("doors", .int32)
            Attribute("mileage", .int64)
            Attribute("seats", .int16)
            Attribute("weight", .float)
            Attribute("power", .double)
            Attribute("registered", .bool)
            Attribute("price", .decimal)
            Attribute("builtAt", .date)
            Attribute("vin", .uuid)
            Attribute("photo", .data, optional: true)
            Attribute("nickname", .string, optional: true)
        },
        Entity("Author") {
            Attribute("id", .string, unique: true)
            Attribute("name", .string)
            Relationship("articles", to: "Article", .unorderedToMany, inverse: "author")
        },
        Entity("Article") {
            Attribute("id", .int64, unique: true)
            Attribute("title", .string)
            Attribute("text", .string)
            Relationship("author", to: "Author", inverse: "articles")
            Relationship("categories", to: "Category", .orderedToMany, inverse: "articles")
        },
        Entity("Category") {
            Attribute("id", .uuid, unique: true)
            Attribute("name", .string)
            Relationship("articles", to: "Article", .unorderedToMany, inverse: "categories")
        },
    ]
}
