import CoreValue
import Foundation

/// An author, unique by `id`.
public struct Author: CVManagedUniqueStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Author"
    /// The identifying attribute.
    public static let IdentifierName = "id"

    /// The identifier.
    public var id: String
    /// The name.
    public var name: String

    /// Creates an author.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }

    /// The identifier value.
    public func IdentifierValue() -> IdentifierType { id }

    /// Unboxes an author.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Author {
        try curry(self.init) <^> o <| "id" <^> o <| "name"
    }
}

/// An article, unique by `id`, with an author and an ordered list of categories.
public struct Article: CVManagedUniqueStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Article"
    /// The identifying attribute.
    public static let IdentifierName = "id"

    /// The identifier.
    public var id: Int64
    /// The title.
    public var title: String
    /// The text.
    public var text: String
    /// The author, if any.
    public var author: Author?
    /// The categories, in order.
    public var categories: [Category]

    /// Creates an article.
    public init(id: Int64, title: String, text: String, author: Author?, categories: [Category]) {
        self.id = id
        self.title = title
        self.text = text
        self.author = author
        self.categories = categories
    }

    /// The identifier value.
    public func IdentifierValue() -> IdentifierType { id }

    /// Unboxes an article.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Article {
        try curry(self.init)
            <^> o <| "id"
            <^> o <| "title"
            <^> o <| "text"
            <^> o <|? "author"
            <^> o <|| "categories"
    }
}

/// A category, unique by a UUID.
public struct Category: CVManagedUniqueStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Category"
    /// The identifying attribute.
    public static let IdentifierName = "id"

    /// The identifier.
    public var id: UUID
    /// The name.
    public var name: String

    /// Creates a category.
    public init(id: UUID, name: String) {
        self.id = id
        self.name = name
    }

    /// The identifier value.
    public func IdentifierValue() -> IdentifierType { id }

    /// Unboxes a category.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Category {
        try curry(self.init) <^> o <| "id" <^> o <| "name"
    }
}
