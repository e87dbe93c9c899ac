import CoreValue
import Foundation

/// A shop: a plain struct (every save inserts), with an owner and an unordered set of products.
public struct Shop: CVManagedStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Shop"

    /// The name.
    public var name: String
    /// The owner.
    public var owner: Employee?
    /// The products on sale.
    public var products: Set<Product>

    /// Creates a shop.
    public init(name: String, owner: Employee?, products: Set<Product>) {
        self.name = name
        self.owner = owner
        self.products = products
    }

    /// Unboxes a shop.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Shop {
        try curry(self.init)
            <^> o <| "name"
            <^> o <|? "owner"
            <^> o <|| "products"
    }
}

/// A product, unique by its `id`.
public struct Product: CVManagedUniqueStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Product"
    /// The identifying attribute.
    public static let IdentifierName = "id"

    /// The identifier.
    public var id: Int32
    /// The name.
    public var name: String
    /// The price.
    public var price: Decimal

    /// Creates a product.
    public init(id: Int32, name: String, price: Decimal) {
        self.id = id
        self.name = name
        self.price = price
    }

    /// The identifier value.
    public func IdentifierValue() -> IdentifierType { id }

    /// Unboxes a product.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Product {
        try curry(self.init)
            <^> o <| "id"
            <^> o <| "name"
            <^> o <| "price"
    }
}
