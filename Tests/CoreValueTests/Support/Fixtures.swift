@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Example values shared by the suites.
enum Fixtures {
    static func employee(_ name: String, age: Int16 = 30, department: String = "Sales") -> Employee {
        Employee(name: name, age: age, position: nil, department: department, job: "Clerk")
    }

    static func car(_ name: String = "Beetle") -> Car {
        Car(
            name: name, kind: .hatchback, doors: 3, mileage: 123_456_789_012, seats: 4, weight: 812.5,
            power: 37.25, registered: true, price: Decimal(string: "12345.67") ?? 0,
            builtAt: Date(timeIntervalSince1970: 1_700_000_000.25), vin: UUID(), photo: Data([0, 1, 2, 255]),
            nickname: "Herbie")
    }

    static func category(_ name: String) -> CoreValueExamples.Category {
        CoreValueExamples.Category(id: UUID(), name: name)
    }

    /// Rows of an entity in the store, counted with a fresh context.
    static func count(_ store: any Store, _ entity: String) throws -> Int {
        try ManagedObjectContext(store: store).fetch(FetchRequest(entityName: entity)).count
    }
}

/// Whether an error is an unboxing error (`CVErrorDomain`, `CVErrorUnboxFailed`) whose message mentions
/// every given fragment.
func isUnboxError(_ error: any Error, mentioning fragments: [String]) -> Bool {
    let error = error as NSError
    return error.domain == CVErrorDomain && error.code == CVErrorUnboxFailed
        && fragments.allSatisfy { error.localizedDescription.contains($0) }
}

/// Whether an error is a `CVManagedStructError` for which `match` holds.
func isStructError(_ error: any Error, _ match: (CVManagedStructError) -> Bool) -> Bool {
    (error as? CVManagedStructError).map(match) ?? false
}
