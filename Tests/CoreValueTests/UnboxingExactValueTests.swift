@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// `<|` and `<|?` hand a value of a standard type held in its own case straight back (no `ManagedValue`, no
/// witness call). Every other read (a widening, an enum's raw value, a mismatch) must still go the general way
/// and read, or fail, exactly as before.
@Suite struct UnboxingExactValueTests {
    static let model = Result {
        try ManagedObjectModel([
            Entity("Every") {
                Attribute("i16", .int16)
                Attribute("i32", .int32)
                Attribute("i64", .int64)
                Attribute("dbl", .double)
                Attribute("flt", .float)
                Attribute("flag", .bool)
                Attribute("text", .string)
                Attribute("bytes", .data)
                Attribute("when", .date)
                Attribute("amount", .decimal)
                Attribute("uid", .uuid)
                Attribute("none", .string, optional: true)
            }
        ])
    }

    enum Colour: String, Unboxing, Boxing {
        case red, green
    }

    static let uid = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF") ?? UUID()
    static let when = Date(timeIntervalSince1970: 1_700_000_000.25)

    static func object() throws -> ManagedObject {
        let context = ManagedObjectContext(store: MemoryStore(model: try model.get()))
        let object = try context.insert(entityName: "Every")
        let values: [(String, AttributeValue)] = [
            ("i16", .int16(-7)), ("i32", .int32(70_000)), ("i64", .int64(Int64.min)), ("dbl", .double(2.5)),
            ("flt", .float(1.25)), ("flag", .bool(true)), ("text", .string("green")),
            ("bytes", .data(Data([0, 1, 255]))), ("when", .date(when)),
            ("amount", .decimal(Decimal(string: "12.34") ?? 0)), ("uid", .uuid(uid)),
        ]
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// The seed's unboxing errors, as the read-order tests check them.
    static func isUnboxingError(_ error: any Error, saying text: String) -> Bool {
        UnboxingReadOrderTests.isUnboxingError(error, saying: text)
    }

    @Test func eachStandardTypeReadsItsOwnCase() throws {
        let object = try Self.object()
        #expect(try object <| "i16" as Int16 == -7)
        #expect(try object <| "i32" as Int32 == 70_000)
        #expect(try object <| "i64" as Int64 == Int64.min)
        #expect(try object <| "i64" as Int == Int.min)
        #expect(try object <| "dbl" as Double == 2.5)
        #expect(try object <| "flt" as Float == 1.25)
        #expect(try object <| "flag" as Bool == true)
        #expect(try object <| "text" as String == "green")
        #expect(try object <| "bytes" as Data == Data([0, 1, 255]))
        #expect(try object <| "when" as Date == Self.when)
        #expect(try object <| "amount" as Decimal == Decimal(string: "12.34"))
        #expect(try object <| "uid" as UUID == Self.uid)
        // The optional operator: the same values, and nil for a null.
        #expect(try object <|? "i16" as Int16? == -7)
        #expect(try object <|? "text" as String? == "green")
        #expect(try object <|? "bytes" as Data? == Data([0, 1, 255]))
        #expect(try object <|? "none" as String? == nil)
    }

    @Test func otherReadsStillConvertOrFail() throws {
        let object = try Self.object()
        // Widened without loss: the general path.
        #expect(try object <| "i16" as Int == -7)
        #expect(try object <| "i16" as Int64 == -7)
        #expect(try object <| "i32" as Int == 70_000)
        #expect(try object <| "flt" as Double == 1.25)
        #expect(try object <| "i16" as Decimal == Decimal(-7))
        #expect(try object <|? "i32" as Int64? == 70_000)
        // An enum's raw value goes through the enum's own unboxing.
        #expect(try object <| "text" as Colour == .green)
        // Lossy or unrelated reads throw the seed's errors, naming the key.
        #expect { try object <| "i32" as Int16 } throws: { Self.isUnboxingError($0, saying: "'i32'") }
        #expect { try object <| "i64" as Int32 } throws: { Self.isUnboxingError($0, saying: "'i64'") }
        #expect { try object <| "flag" as String } throws: { Self.isUnboxingError($0, saying: "found bool") }
        #expect { try object <|? "text" as Int? } throws: { Self.isUnboxingError($0, saying: "'text'") }
        #expect { try object <| "none" as String } throws: { Self.isUnboxingError($0, saying: "no value") }
    }
}
