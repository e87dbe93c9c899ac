@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `AttributeValue` equality is stored-value equality: NaN equals NaN (as in PostgreSQL), hashes agree.
@Suite struct AttributeValueEqualityTests {
    @Test(arguments: [
        AttributeValue.double(.nan), .float(.nan), .decimal(.nan), .double(-0.0), .int64(3), .string("é"), .null,
    ])
    func aValueEqualsItselfAndHashesAlike(_ value: AttributeValue) {
        #expect(value == value)
        #expect(Set([value, value]).count == 1)
    }

    @Test func textComparesByBytesAsPostgreSQLDoes() throws {
        #expect(AttributeValue.string("\u{E9}") != .string("e\u{301}"))
        #expect(Set([AttributeValue.string("\u{E9}"), .string("e\u{301}")]).count == 2)
        let store = MemoryStore(model: ExampleModel.model)
        var car = Car(
            name: "\u{E9}", kind: .sedan, doors: 4, mileage: 1, seats: 5, weight: 1, power: 1, registered: true,
            price: 1, builtAt: Date(timeIntervalSince1970: 0), vin: UUID(), photo: nil, nickname: nil)
        try car.save(ManagedObjectContext(store: store))
        car.name = "e\u{301}"
        try car.save(ManagedObjectContext(store: store))
        let read: [Car] = try Car.query(ManagedObjectContext(store: store), predicate: nil)
        #expect(read.map { Array($0.name.utf8) } == [Array("e\u{301}".utf8)])
    }

    @Test func differentCasesOrPayloadsDiffer() {
        #expect(AttributeValue.int16(1) != .int32(1))
        #expect(AttributeValue.double(.nan) != .double(1))
        #expect(AttributeValue.double(.nan) != .float(.nan))
        #expect(AttributeValue.string("a") != .null)
    }

    @Test func reboxingAnUnchangedStructHoldingNaNRecordsNoChange() throws {
        let store = MemoryStore(model: ExampleModel.model)
        var car = Car(
            name: "nan", kind: .sedan, doors: 4, mileage: 1, seats: 5, weight: .nan, power: .nan, registered: true,
            price: 1, builtAt: Date(timeIntervalSince1970: 0), vin: UUID(), photo: nil, nickname: nil)
        let context = ManagedObjectContext(store: store)
        try car.save(context)
        try car.toObject(context)
        #expect(!context.hasChanges)
    }
}
