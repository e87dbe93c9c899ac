@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Boxing reads fields through typed key paths, with `Mirror` as the fallback: both paths give the same
/// objects and the same errors.
@Suite struct ReflectionPathTests {
    /// What an object holds, relationships as their members' attribute snapshots (order kept).
    static func contents(_ object: ManagedObject, depth: Int = 2) throws -> String {
        var parts: [String] = []
        for attribute in object.entity.attributes {
            parts.append("\(attribute.name)=\(try object.value(forKey: attribute.name))")
        }
        guard depth > 0 else { return parts.joined(separator: ",") }
        for relationship in object.entity.relationships {
            let members =
                relationship.isToMany
                ? try object.objects(forKey: relationship.name)
                : try object.object(forKey: relationship.name).map { [$0] } ?? []
            var described = try members.map { try contents($0, depth: depth - 1) }
            if relationship.kind == .unorderedToMany { described.sort() }
            parts.append("\(relationship.name)=[\(described.joined(separator: ";"))]")
        }
        return parts.joined(separator: ",")
    }

    static func boxed(_ values: [any BoxingStruct], _ reflection: LayoutCache.Reflection) throws -> [String] {
        let context = ManagedObjectContext(store: MemoryStore(model: ExampleModel.model))
        context.layouts.reflection = reflection
        return try values.map { try contents(try $0.toObject(context)) }
    }

    static var values: [any BoxingStruct] {
        [
            Fixtures.car(),
            Company(name: "Acme", employees: [Fixtures.employee("Ann"), Fixtures.employee("Bob", age: 41)]),
            Shop(
                name: "Corner", owner: Fixtures.employee("Cy"),
                products: [Product(id: 1, name: "Tea", price: 2), Product(id: 2, name: "Cake", price: 3)]),
            Article(
                id: 9, title: "T", text: "x", author: Author(id: "a", name: "Ann"),
                categories: [Fixtures.category("B"), Fixtures.category("A")]),
        ]
    }

    @Test func keyPathsAndMirrorBoxTheSameObjects() throws {
        let values = Self.values
        let viaKeyPaths = try Self.boxed(values, .keyPaths)
        let viaMirror = try Self.boxed(values, .mirror)
        #expect(viaKeyPaths == viaMirror)
        #expect(viaKeyPaths.count == values.count)
        #expect(viaKeyPaths[0].contains("kind=string(\"hatchback\")"))
    }

    struct Stray: CVManagedStruct {
        static let EntityName = "Employee"
        var name: String
        var nickname: String
        static func fromObject(_ o: ManagedObject) throws -> Stray {
            try curry(self.init) <^> o <| "name" <^> o <| "nickname"
        }
    }

    @Test(arguments: [LayoutCache.Reflection.keyPaths, .mirror])
    func anUnknownFieldIsTheSameErrorEitherWay(_ reflection: LayoutCache.Reflection) throws {
        let context = ManagedObjectContext(store: MemoryStore(model: ExampleModel.model))
        context.layouts.reflection = reflection
        #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "nickname")) {
            try Stray(name: "A", nickname: "B").toObject(context)
        }
        #expect(!context.hasChanges)
    }
}
