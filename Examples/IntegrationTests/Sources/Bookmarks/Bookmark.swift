import CoreValue
import Foundation

/// A bookmark, unique by its URL.
public struct Bookmark: CVManagedUniqueStruct, Equatable, Sendable {
    public static let EntityName = "Bookmark"
    public static let IdentifierName = "url"

    public var url: URL
    public var title: String
    public var visits: Int

    public init(url: URL, title: String, visits: Int = 0) {
        self.url = url
        self.title = title
        self.visits = visits
    }

    public func IdentifierValue() -> IdentifierType { url }

    public static func fromObject(_ o: ManagedObject) throws -> Bookmark {
        try curry(self.init) <^> o <| "url" <^> o <| "title" <^> o <| "visits"
    }

    /// The model the app's store opens.
    public static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity(
                "Bookmark",
                attributes: [
                    Attribute("url", .uri, unique: true), Attribute("title", .string), Attribute("visits", .int64),
                ])
        ])
    }
}
