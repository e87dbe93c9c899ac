@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// Boxing reads each field through a reader built for the field's type on first sight; a field of existential
/// type whose value changes type must still box correctly (or fail loudly), never read as null.
@Suite struct FieldReaderTests {
    struct Note: CVManagedStruct {
        static let EntityName = "Note"
        var text: Any

        static func fromObject(_ o: ManagedObject) throws -> Note { Note(text: try o <|? "text" as String? as Any) }
    }

    static let model = Result {
        try ManagedObjectModel([Entity("Note") { Attribute("text", .string, optional: true) }])
    }

    @Test func aFieldWhoseValueChangesTypeTakesTheGeneralPath() throws {
        let context = ManagedObjectContext(store: MemoryStore(model: try Self.model.get()))
        let objects = try [Note(text: String?.none as Any), Note(text: "hello"), Note(text: String?("x") as Any)]
            .map { try $0.toObject(context) }
        #expect(try objects.map { try $0.value(forKey: "text") } == [.null, .string("hello"), .string("x")])
    }

    @Test func aValueOfAnotherTypeAfterAnOptionalIsATypeMismatchNotANull() throws {
        let context = ManagedObjectContext(store: MemoryStore(model: try Self.model.get()))
        _ = try Note(text: String?.none as Any).toObject(context)
        #expect(throws: CVManagedStructError.self) { try Note(text: 42).toObject(context) }
    }

    struct Reading: CVManagedStruct {
        static let EntityName = "Reading"
        var celsius: Double?
        var count: Int16
        var label: String?

        static func fromObject(_ o: ManagedObject) throws -> Reading {
            Reading(celsius: try o <|? "celsius", count: try o <| "count", label: try o <|? "label")
        }
    }

    @Test func optionalAndPlainFieldsRoundTripThroughTheirReaders() throws {
        let model = try ManagedObjectModel([
            Entity("Reading") {
                Attribute("celsius", .double, optional: true)
                Attribute("count", .int16)
                Attribute("label", .string, optional: true)
            }
        ])
        let store = MemoryStore(model: model)
        func reading(_ i: Int) -> Reading {
            let celsius: Double? = i % 3 == 0 ? nil : Double(i) / 4
            let label: String? = i % 2 == 0 ? "r\(i)" : nil
            return Reading(celsius: celsius, count: Int16(i), label: label)
        }
        let readings = (0..<50).map(reading)
        let context = ManagedObjectContext(store: store)
        for reading in readings { try reading.toObject(context) }
        try context.save()
        let back: [Reading] = try Reading.query(
            ManagedObjectContext(store: store), predicate: nil, sortDescriptors: [CVSortDescriptor(key: "count")])
        #expect(back.map(\.celsius) == readings.map(\.celsius))
        #expect(back.map(\.count) == readings.map(\.count))
        #expect(back.map(\.label) == readings.map(\.label))
    }
}
