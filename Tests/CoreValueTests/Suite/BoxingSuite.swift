import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Boxing and unboxing every supported type, nested structs and collections.
enum BoxingSuite {
    static let cases: [SuiteCase] = [
        SuiteCase("every attribute type round-trips") { make in
            let store = try make()
            var car = Fixtures.car()
            try car.save(ManagedObjectContext(store: store))
            let read: [Car] = try Car.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read == [car])
        },
        SuiteCase("an enum stores its raw value") { make in
            let context = ManagedObjectContext(store: try make())
            let object = try Fixtures.car().toObject(context)
            #expect(try object.value(forKey: "kind") == .string("hatchback"))
        },
        SuiteCase("nil optionals clear attributes") { make in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            var car = Fixtures.car()
            try car.save(context)
            car.photo = nil
            car.nickname = nil
            try car.save(context)
            let read: [Car] = try Car.query(ManagedObjectContext(store: store), predicate: nil)
            #expect(read.first?.photo == nil)
            #expect(read.first?.nickname == nil)
            #expect(read.count == 1)
        },
    ]
}
