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

    /// A field of each standard type, plain and optional: the key-path path reads each with a reader of its
    /// own type (a load at the field's offset), and a field whose type differs from its attribute's
    /// (`Int16` into `int64`, `Float` into `double`) is still converted.
    struct EveryType: BoxingStruct {
        static let EntityName = "Every"
        var text: String
        var textOrNil: String?
        var int: Int
        var intOrNil: Int?
        var int64: Int64
        var int64OrNil: Int64?
        var int32: Int32
        var int32OrNil: Int32?
        var int16: Int16
        var int16OrNil: Int16?
        var double: Double
        var doubleOrNil: Double?
        var float: Float
        var floatOrNil: Float?
        var bool: Bool
        var boolOrNil: Bool?
        var date: Date
        var dateOrNil: Date?
        var data: Data
        var dataOrNil: Data?
        var decimal: Decimal
        var decimalOrNil: Decimal?
        var uuid: UUID
        var uuidOrNil: UUID?
        var widened: Int16
        var widenedOrNil: Float?
    }

    static let everyTypeModel: ManagedObjectModel? = {
        var attributes: [Attribute] = []
        for (name, type) in [
            ("text", AttributeType.string), ("int", .int64), ("int64", .int64), ("int32", .int32), ("int16", .int16),
            ("double", .double), ("float", .float), ("bool", .bool), ("date", .date), ("data", .data),
            ("decimal", .decimal), ("uuid", .uuid),
        ] {
            attributes.append(Attribute(name, type))
            attributes.append(Attribute(name + "OrNil", type, optional: true))
        }
        attributes.append(Attribute("widened", .int64))
        attributes.append(Attribute("widenedOrNil", .double, optional: true))
        return try? ManagedObjectModel([Entity("Every", attributes: attributes)])
    }()

    static func everyType(set: Bool) -> EveryType {
        EveryType(
            text: "é", textOrNil: set ? "e\u{301}" : nil, int: -7, intOrNil: set ? .max : nil, int64: .min,
            int64OrNil: set ? 64 : nil, int32: 32, int32OrNil: set ? -32 : nil, int16: 16, int16OrNil: set ? -16 : nil,
            double: .nan, doubleOrNil: set ? 0.5 : nil, float: 1.5, floatOrNil: set ? -0.25 : nil, bool: true,
            boolOrNil: set ? false : nil, date: Date(timeIntervalSince1970: 12.5),
            dateOrNil: set ? Date(timeIntervalSince1970: -1) : nil, data: Data([0, 255]), dataOrNil: set ? Data() : nil,
            decimal: Decimal(string: "12.34") ?? 0, decimalOrNil: set ? Decimal(-1) : nil,
            uuid: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
            uuidOrNil: set ? UUID(uuid: (9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9)) : nil,
            widened: 300, widenedOrNil: set ? 2.5 : nil)
    }

    @Test(arguments: [true, false])
    func everyStandardFieldTypeBoxesAlikeEitherWay(_ set: Bool) throws {
        let model = try #require(Self.everyTypeModel)
        var results: [[String: AttributeValue]] = []
        for reflection in [LayoutCache.Reflection.keyPaths, .mirror] {
            let context = ManagedObjectContext(store: MemoryStore(model: model))
            context.layouts.reflection = reflection
            let object = try Self.everyType(set: set).toObject(context)
            var values: [String: AttributeValue] = [:]
            for attribute in object.entity.attributes {
                values[attribute.name] = try object.value(forKey: attribute.name)
            }
            results.append(values)
        }
        #expect(results[0] == results[1])
        let values = results[0]
        #expect(values["text"] == .string("é"))
        #expect(values["int"] == .int64(-7))
        #expect(values["int64"] == .int64(.min))
        #expect(values["int16"] == .int16(16))
        #expect(values["float"] == .float(1.5))
        #expect(values["widened"] == .int64(300))
        #expect(values["data"] == .data(Data([0, 255])))
        if set {
            #expect(values["textOrNil"] == .string("e\u{301}"))
            #expect(values["textOrNil"] != values["text"])
            #expect(values["intOrNil"] == .int64(.max))
            #expect(values["widenedOrNil"] == .double(2.5))
            #expect(values["dataOrNil"] == .data(Data()))
        } else {
            for (name, value) in values where name.hasSuffix("OrNil") { #expect(value == .null, "\(name)") }
        }
    }
}
