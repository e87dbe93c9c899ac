@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Boxing and unboxing every supported type, nested structs and collections.
enum BoxingSuite {
    static var cases: [SuiteCase] {
        basicCases + errorCases + conversionCases + collectionCases + customCases + randomCases
    }

    static let basicCases: [SuiteCase] = [
        SuiteCase("dates are kept to the nearest microsecond, as timestamptz keeps them") { make, api in
            let store = try make()
            var car = Fixtures.car("precise")
            car.builtAt = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
            try await car.save(ManagedObjectContext(store: store), via: api)
            let read: [Car] = try await Car.query(
                ManagedObjectContext(store: store), predicate: .key("name") == "precise", via: api)
            let expected = Date(timeIntervalSinceReferenceDate: 123_456_789_123_457 / 1_000_000)
            #expect(read.first?.builtAt == expected)
        },
        SuiteCase("every attribute type round-trips") { make, api in
            let store = try make()
            var car = Fixtures.car()
            try await car.save(ManagedObjectContext(store: store), via: api)
            let read: [Car] = try await Car.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read == [car])
        },
        SuiteCase("an enum stores its raw value") { make, api in
            let context = ManagedObjectContext(store: try make())
            let object = try await Fixtures.car().toObject(context, via: api)
            #expect(try object.value(forKey: "kind") == .string("hatchback"))
        },
        SuiteCase("nil optionals clear attributes") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var car = Fixtures.car()
            try await car.save(context, via: api)
            car.photo = nil
            car.nickname = nil
            try await car.save(context, via: api)
            let read: [Car] = try await Car.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.photo == nil)
            #expect(read.first?.nickname == nil)
            #expect(read.count == 1)
        },
    ]
}

/// An employee read with the wrong types, to check unboxing errors.
struct EmployeeAgeAsString: CVManagedStruct {
    static let EntityName = "Employee"
    var age: String
    static func fromObject(_ o: ManagedObject) throws -> EmployeeAgeAsString { try curry(self.init) <^> o <| "age" }
}

/// A car whose mileage (int64) is read as `Int16`: lossy, so it must throw.
struct CarMileageInt16: CVManagedStruct {
    static let EntityName = "Car"
    var mileage: Int16
    static func fromObject(_ o: ManagedObject) throws -> CarMileageInt16 { try curry(self.init) <^> o <| "mileage" }
}

/// An employee with optional reads, one of the wrong type.
struct EmployeeOptionalReads: CVManagedStruct {
    static let EntityName = "Employee"
    var position: String?
    var age: String?
    static func fromObject(_ o: ManagedObject) throws -> EmployeeOptionalReads {
        try curry(self.init) <^> o <|? "position" <^> o <|? "age"
    }
}

/// A struct with a property the entity does not have.
struct EmployeeWithExtra: CVManagedStruct {
    static let EntityName = "Employee"
    var name: String
    var age: Int16
    var department: String
    var job: String
    var shoeSize: Int
    static func fromObject(_ o: ManagedObject) throws -> EmployeeWithExtra {
        throw NSError(domain: CVErrorDomain, code: CVErrorUnboxFailed)
    }
}

/// A struct whose entity is not in the model.
struct Spaceship: CVManagedStruct {
    static let EntityName = "Spaceship"
    var name: String
    static func fromObject(_ o: ManagedObject) throws -> Spaceship { try curry(self.init) <^> o <| "name" }
}

/// A company whose employees list holds a struct of the wrong entity.
struct CompanyOfCars: CVManagedStruct {
    static let EntityName = "Company"
    var name: String
    var employees: [Car]
    static func fromObject(_ o: ManagedObject) throws -> CompanyOfCars {
        try curry(self.init) <^> o <| "name" <^> o <|| "employees"
    }
}

/// An author that lists its articles, whose articles point back at it: a cycle of inverses.
struct CyclicAuthor: CVManagedUniqueStruct, Hashable {
    static let EntityName = "Author"
    static let IdentifierName = "id"
    var id: String
    var name: String
    var articles: Set<CyclicArticle>
    func IdentifierValue() -> IdentifierType { id }
    static func fromObject(_ o: ManagedObject) throws -> CyclicAuthor {
        try curry(self.init) <^> o <| "id" <^> o <| "name" <^> o <|| "articles"
    }
}

/// An article with its author, the other half of the cycle.
struct CyclicArticle: CVManagedUniqueStruct, Hashable {
    static let EntityName = "Article"
    static let IdentifierName = "id"
    var id: Int64
    var title: String
    var text: String
    var author: CyclicAuthor?
    func IdentifierValue() -> IdentifierType { id }
    static func fromObject(_ o: ManagedObject) throws -> CyclicArticle {
        try curry(self.init) <^> o <| "id" <^> o <| "title" <^> o <| "text" <^> o <|? "author"
    }
}

extension BoxingSuite {
    static let errorCases: [SuiteCase] = [
        SuiteCase("a wrong type throws the seed's unboxing error naming key and type") { make, api in
            let context = ManagedObjectContext(store: try make())
            let object = try await Fixtures.employee("Ann").toObject(context, via: api)
            #expect {
                _ = try EmployeeAgeAsString.fromObject(object)
            } throws: { isUnboxError($0, mentioning: ["'age'", "Employee", "String"]) }
        },
        SuiteCase("lossy numeric conversion throws") { make, api in
            let context = ManagedObjectContext(store: try make())
            var car = Fixtures.car()
            car.mileage = 70_000
            let object = try await car.toObject(context, via: api)
            #expect {
                _ = try CarMileageInt16.fromObject(object)
            } throws: { isUnboxError($0, mentioning: ["'mileage'", "Int16"]) }
            #expect(throws: CVManagedStructError.self) { try object.setValue(Int64(70_000), forKey: "seats") }
            #expect(try object.value(forKey: "mileage", as: Int32.self) == 70_000)
        },
        SuiteCase("<|? gives nil for null but throws for a wrong type") { make, api in
            let context = ManagedObjectContext(store: try make())
            let object = try await Fixtures.employee("Ann").toObject(context, via: api)
            #expect {
                _ = try EmployeeOptionalReads.fromObject(object)
            } throws: { isUnboxError($0, mentioning: ["'age'"]) }
            try object.setValue(.null, forKey: "age")
            let read = try EmployeeOptionalReads.fromObject(object)
            #expect(read.position == nil)
            #expect(read.age == nil)
        },
        SuiteCase("a missing required value throws naming key and type") { make, api in
            let context = ManagedObjectContext(store: try make())
            let object = try context.insert(entityName: "Employee")
            #expect {
                _ = try Employee.fromObject(object)
            } throws: { isUnboxError($0, mentioning: ["'name'", "String"]) }
        },
        SuiteCase("an unknown field throws and leaves nothing behind") { make, api in
            let context = ManagedObjectContext(store: try make())
            let extra = EmployeeWithExtra(name: "A", age: 1, department: "D", job: "J", shoeSize: 44)
            await #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "shoeSize")) {
                _ = try await extra.toObject(context, via: api)
            }
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
        },
        SuiteCase("a nested struct of the wrong entity throws and leaves nothing behind") { make, api in
            let context = ManagedObjectContext(store: try make())
            let company = CompanyOfCars(name: "Cars", employees: [Fixtures.car()])
            await #expect(throws: CVManagedStructError.self) { _ = try await company.toObject(context, via: api) }
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
        },
        SuiteCase("an unknown entity throws instead of trapping") { make, api in
            let context = ManagedObjectContext(store: try make())
            await #expect(throws: CVManagedStructError.unknownEntity("Spaceship")) {
                _ = try await Spaceship(name: "Enterprise").toObject(context, via: api)
            }
            await #expect(throws: CVManagedStructError.unknownEntity("Spaceship")) {
                let _: [Spaceship] = try await Spaceship.query(context, predicate: nil, via: api)
            }
        },
        SuiteCase("a nil context gives a readable ephemeral object") { make, api in
            _ = ManagedObjectContext(store: try make())
            var employee = Fixtures.employee("Eph")
            let object = try employee.mutatingToObject(nil)
            #expect(object.managedObjectContext == nil)
            #expect(object.objectID.isTemporary)
            #expect(employee.objectID == nil)
            #expect(try Employee.fromObject(object).name == "Eph")
            let company = try await Company(name: "C", employees: [employee]).toObject(nil, via: api)
            #expect(try Company.fromObject(company).employees.map(\.name) == ["Eph"])
        },
        SuiteCase("unboxing a cycle of inverse relationships terminates") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            // Box from the author's side: a nested struct's (empty) back-reference would otherwise replace the
            // links boxed before it, as in the seed.
            let articles = (1...3).map { CyclicArticle(id: $0, title: "T\($0)", text: "x", author: nil) }
            try await CyclicAuthor(id: "a1", name: "Ann", articles: Set(articles)).save(context, via: api)
            let fresh = ManagedObjectContext(store: store)
            let authors: [CyclicAuthor] = try await CyclicAuthor.query(fresh, predicate: nil, via: api)
            #expect(authors.count == 1)
            #expect(authors.first?.articles.count == 3)
            // Inside the author, each article's back-reference to the author being unboxed reads as nil.
            #expect(authors.first?.articles.allSatisfy { $0.author == nil } == true)
            let read: [CyclicArticle] = try await CyclicArticle.query(
                fresh, predicate: nil, sortDescriptors: [.init(key: "id")], via: api)
            #expect(read.map(\.id) == [1, 2, 3])
            // Inside an article, its author lists the other articles only (the one being unboxed is left out).
            #expect(read.first?.author?.articles.map(\.id).sorted() == [2, 3])
        },
    ]
}

/// A product with an `NSDecimalNumber` price and a plain `Int` identifier (stored as `int32`).
struct LegacyProduct: CVManagedUniqueStruct {
    static let EntityName = "Product"
    static let IdentifierName = "id"
    var id: Int
    var name: String
    var price: NSDecimalNumber
    func IdentifierValue() -> IdentifierType { id }
    static func fromObject(_ o: ManagedObject) throws -> LegacyProduct {
        try curry(self.init) <^> o <| "id" <^> o <| "name" <^> o <| "price"
    }
}

extension BoxingSuite {
    static let conversionCases: [SuiteCase] = [
        SuiteCase("NSDecimalNumber and Int box into decimal and int32 attributes") { make, api in
            let store = try make()
            let product = LegacyProduct(id: 7, name: "Pen", price: NSDecimalNumber(string: "1.25"))
            try await product.save(ManagedObjectContext(store: store), via: api)
            let read: [LegacyProduct] = try await LegacyProduct.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.price == NSDecimalNumber(string: "1.25"))
            #expect(read.first?.id == 7)
            let typed: [Product] = try await Product.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(typed.first?.price == Decimal(string: "1.25"))
        },
        SuiteCase("an Int too large for its int32 attribute throws naming the field") { make, api in
            let context = ManagedObjectContext(store: try make())
            let product = LegacyProduct(id: Int(Int32.max) + 1, name: "Pen", price: 1)
            await #expect {
                _ = try await product.toObject(context, via: api)
            } throws: { error in
                isStructError(error) { $0.code == .typeMismatch && $0.entity == "Product" && $0.key == "id" }
            }
            #expect(!context.hasChanges)
        },
    ]
}

/// A company whose staff list is optional: `nil` clears it, and it reads back as an empty array.
struct OptionalStaffCompany: CVManagedPersistentStruct {
    static let EntityName = "Company"
    var objectID: ManagedObjectID?
    var name: String
    var employees: [Employee]?
    static func fromObject(_ o: ManagedObject) throws -> OptionalStaffCompany {
        try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <|| "employees"
    }
}

extension BoxingSuite {
    static let collectionCases: [SuiteCase] = [
        SuiteCase("optional collections box when set and clear when nil") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var company = OptionalStaffCompany(
                name: "Acme", employees: [Fixtures.employee("A"), Fixtures.employee("B")])
            try await company.save(context, via: api)
            var read: [OptionalStaffCompany] = try await OptionalStaffCompany.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.employees?.map(\.name) == ["A", "B"])
            company.employees = nil
            try await company.save(context, via: api)
            read = try await OptionalStaffCompany.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.employees == [])
            #expect(try Fixtures.count(store, "Employee") == 2)
        },
        SuiteCase("boxing without saving reads back through the object") { make, api in
            let context = ManagedObjectContext(store: try make())
            let company = Company(name: "Acme", employees: (1...3).map { Fixtures.employee("E\($0)") })
            let object = try await company.toObject(context, via: api)
            let read = try Company.fromObject(object)
            #expect(read.name == company.name && read.employees.map(\.name) == company.employees.map(\.name))
            // Unsaved objects have temporary IDs; boxing the struct again in this context finds the same object.
            #expect(read.objectID?.isTemporary == true)
            #expect(try await read.toObject(context, via: api) === object)
            #expect(try object.objects(forKey: "employees").count == 3)
            #expect(context.insertedObjects.count == 4)
        },
    ]
}

/// A user type that boxes itself into a decimal attribute through the `Boxing` protocol.
struct Cents: Boxing, Unboxing, Equatable {
    var value: Int

    func box(_ object: ManagedObject, withKey key: String) throws {
        try object.setValue(Decimal(value) / 100, forKey: key)
    }

    static func unbox(_ value: ManagedValue) throws -> Cents {
        let decimal = try Decimal.unbox(value) * 100
        return Cents(value: NSDecimalNumber(decimal: decimal).intValue)
    }
}

/// A product priced in `Cents`.
struct CentsProduct: CVManagedUniqueStruct {
    static let EntityName = "Product"
    static let IdentifierName = "id"
    var id: Int32
    var name: String
    var price: Cents
    func IdentifierValue() -> IdentifierType { id }
    static func fromObject(_ o: ManagedObject) throws -> CentsProduct {
        try curry(self.init) <^> o <| "id" <^> o <| "name" <^> o <| "price"
    }
}

extension BoxingSuite {
    static let customCases: [SuiteCase] = [
        SuiteCase("a custom Boxing type writes through its own box method") { make, api in
            let store = try make()
            try await CentsProduct(id: 1, name: "Pen", price: Cents(value: 250)).save(
                ManagedObjectContext(store: store), via: api)
            let products: [Product] = try await Product.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(products.first?.price == Decimal(string: "2.5"))
            let read: [CentsProduct] = try await CentsProduct.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(read.first?.price == Cents(value: 250))
        }
    ]
}

extension BoxingSuite {
    /// A random car: values at the edges of each type, exactly representable in PostgreSQL.
    static func randomCar(_ random: inout SeededRandom) -> Car {
        let edgeInts: [Int64] = [.min, -1, 0, 1, .max]
        return Car(
            name: String(
                (0..<Int.random(in: 0...12, using: &random)).map { _ in
                    "aZé💡 '\"\\%_".randomElement(using: &random) ?? "a"
                }),
            kind: CarKind.allCases.randomElement(using: &random) ?? .sedan,
            doors: Int32.random(in: .min ... .max, using: &random),
            mileage: Bool.random(using: &random)
                ? edgeInts.randomElement(using: &random) ?? 0 : Int64.random(in: .min ... .max, using: &random),
            seats: Int16.random(in: .min ... .max, using: &random),
            weight: Float(Int32.random(in: -1_000_000...1_000_000, using: &random)) / 8,
            power: Double(Int64.random(in: -1_000_000_000...1_000_000_000, using: &random)) / 1024,
            registered: Bool.random(using: &random),
            price: Decimal(Int64.random(in: -10_000_000...10_000_000, using: &random)) / 100,
            builtAt: Date(
                timeIntervalSince1970: Double(Int.random(in: -2_000_000_000...4_000_000_000, using: &random)) / 4),
            vin: UUID(),
            photo: Bool.random(using: &random)
                ? nil
                : Data(
                    (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }),
            nickname: Bool.random(using: &random) ? nil : "")
    }

    static let randomCases: [SuiteCase] = [7, 8].map { seed in
        SuiteCase("random cars round-trip (seed \(seed))") { make, api in
            var random = SeededRandom(seed: UInt64(seed))
            let store = try make()
            var cars = (0..<50).map { _ in randomCar(&random) }
            try await cars.saveAll(ManagedObjectContext(store: store), via: api)
            let read: [Car] = try await Car.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            let byID = Dictionary(read.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
            for car in cars {
                #expect(byID[car.objectID] == car, "seed \(seed): \(car)")
            }
            #expect(read.count == cars.count)
        }
    }
}
