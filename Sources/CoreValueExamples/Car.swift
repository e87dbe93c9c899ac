import CoreValue
import Foundation

/// The kind of a car, stored as its raw value.
public enum CarKind: String, Boxing, Unboxing, Sendable, CaseIterable, Codable {
    /// A sedan.
    case sedan
    /// A hatchback.
    case hatchback
    /// A pickup.
    case pickup
}

/// A car with one property of every attribute type.
public struct Car: CVManagedPersistentStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Car"

    /// The stored row, or `nil` before the first save.
    public var objectID: ManagedObjectID?
    /// The name.
    public var name: String
    /// The kind (an enum with a raw value).
    public var kind: CarKind
    /// Doors (`int32`).
    public var doors: Int32
    /// Mileage (`int64`).
    public var mileage: Int64
    /// Seats (`int16`).
    public var seats: Int16
    /// Weight (`float`).
    public var weight: Float
    /// Power (`double`).
    public var power: Double
    /// Whether registered (`bool`).
    public var registered: Bool
    /// Price (`decimal`).
    public var price: Decimal
    /// Build date (`date`).
    public var builtAt: Date
    /// Vehicle identification (`uuid`).
    public var vin: UUID
    /// A photo (`data`, optional).
    public var photo: Data?
    /// A nickname (optional).
    public var nickname: String?

    /// Creates a car.
    public init(
        objectID: ManagedObjectID? = nil, name: String, kind: CarKind, doors: Int32, mileage: Int64, seats: Int16,
        weight: Float, power: Double, registered: Bool, price: Decimal, builtAt: Date, vin: UUID, photo: Data?,
        nickname: String?
    ) {
        self.objectID = objectID
        self.name = name
        self.kind = kind
        self.doors = doors
        self.mileage = mileage
        self.seats = seats
        self.weight = weight
        self.power = power
        self.registered = registered
        self.price = price
        self.builtAt = builtAt
        self.vin = vin
        self.photo = photo
        self.nickname = nickname
    }

    /// Unboxes a car.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Car {
        try curry(self.init)
            <^> o <|? "objectID"
            <^> o <| "name"
            <^> o <| "kind"
            <^> o <| "doors"
            <^> o <| "mileage"
            <^> o <| "seats"
            <^> o <| "weight"
            <^> o <| "power"
            <^> o <| "registered"
            <^> o <| "price"
            <^> o <| "builtAt"
            <^> o <| "vin"
            <^> o <|? "photo"
            <^> o <|? "nickname"
    }
}
