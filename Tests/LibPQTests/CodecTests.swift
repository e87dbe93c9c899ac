import Foundation
import LibPQ
import Testing

/// Encodes and decodes through the binary codecs, no server involved.
func roundTrip<T: PostgresEncodable & PostgresDecodable>(_ value: T) throws -> T {
    let encoded = try PostgresValue(value)
    #expect(encoded.type == T.postgresType)
    return try encoded.decode(T.self)
}

/// A date from microseconds since 1970, exactly representable at microsecond precision.
func date(micros: Int64) -> Date {
    Date(timeIntervalSince1970: Double(micros) / 1_000_000)
}

@Suite struct CodecTests {
    @Test(arguments: [Int16.min, -1, 0, 1, Int16.max])
    func int16(_ value: Int16) throws { #expect(try roundTrip(value) == value) }

    @Test(arguments: [Int32.min, -1, 0, 1, Int32.max])
    func int32(_ value: Int32) throws { #expect(try roundTrip(value) == value) }

    @Test(arguments: [Int64.min, -1, 0, 1, Int64.max])
    func int64(_ value: Int64) throws {
        #expect(try roundTrip(value) == value)
        #expect(try roundTrip(Int(value)) == Int(value))
    }

    /// Fixed-width values hold their bytes in place (`InlineBytes`), others in an array: the same bytes are
    /// the same value either way, and read back the same.
    @Test func valuesHeldInPlaceEqualTheSameBytesInAnArray() throws {
        let inline = try PostgresValue(Int64(0x0102_0304_0506_0708))
        let array = PostgresValue(type: .int8, bytes: [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(inline == array)
        #expect(inline.hashValue == array.hashValue)
        #expect(inline.byteCount == 8)
        #expect(inline != PostgresValue(type: .int8, bytes: [1, 2, 3, 4, 5, 6, 7, 9]))
        #expect(inline != PostgresValue(type: .int4, bytes: [1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(try PostgresValue(Int64?.none) == PostgresValue.null(.int8))
        #expect(try PostgresValue(Int64?.some(1)) == PostgresValue(type: .int8, bytes: [0, 0, 0, 0, 0, 0, 0, 1]))
        let uuid = UUID()
        let uuidBytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        #expect(try PostgresValue(uuid).bytes == uuidBytes)
        #expect(try PostgresValue(true).bytes == [1])
        #expect(try PostgresValue(Int16(-2)).bytes == [0xFF, 0xFE])
        #expect(try PostgresValue(Float(1)).bytes == [0x3F, 0x80, 0, 0])
        #expect(try PostgresValue("text").withBytes { Array($0) } == Array("text".utf8))
        #expect(PostgresValue.null(.text).withBytes { _ in true } == nil)
        #expect(throws: LibPQError.self) { try PostgresValue(Date(timeIntervalSinceReferenceDate: .infinity)) }
    }

    @Test func integersWidenButNeverNarrow() throws {
        let small = try PostgresValue(Int16(-7))
        #expect(try small.decode(Int64.self) == -7)
        #expect(try small.decode(Int32.self) == -7)
        #expect(try small.decode(Int.self) == -7)
        #expect(throws: LibPQError.self) { try PostgresValue(Int64(1)).decode(Int32.self) }
        #expect(throws: LibPQError.self) { try PostgresValue(Int32(1)).decode(Int16.self) }
        #expect(throws: LibPQError.self) { try PostgresValue(Double(1)).decode(Int64.self) }
        #expect(throws: LibPQError.self) { try PostgresValue(Int64(1)).decode(Double.self) }
        #expect(try PostgresValue(Int64(42)).bytes == [0, 0, 0, 0, 0, 0, 0, 42])
    }

    @Test(arguments: [
        0, -0.0, 1.5, -2.25, .pi, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
    ])
    func double(_ value: Double) throws {
        let decoded = try roundTrip(value)
        #expect(decoded == value && decoded.sign == value.sign)
        #expect(try roundTrip(Float(value)) == Float(value))
    }

    @Test func floatNaNAndWidening() throws {
        #expect(try roundTrip(Double.nan).isNaN)
        #expect(try roundTrip(Float.nan).isNaN)
        #expect(try PostgresValue(Float(1.5)).decode(Double.self) == 1.5)
        #expect(throws: LibPQError.self) { try PostgresValue(Double(1.5)).decode(Float.self) }
    }

    @Test func bool() throws {
        #expect(try roundTrip(true) == true)
        #expect(try roundTrip(false) == false)
    }

    @Test(arguments: ["", "plain", "unicode: żółć, 日本語, emoji 👩‍👩‍👧‍👦🚀"])
    func text(_ value: String) throws { #expect(try roundTrip(value) == value) }

    @Test func longText() throws {
        let value = String(repeating: "x🚀", count: 100_000)
        #expect(try roundTrip(value) == value)
    }

    @Test func textWithNULIsRejected() {
        #expect(throws: LibPQError.self) { try PostgresValue("a\u{0}b") }
    }

    @Test func bytea() throws {
        #expect(try roundTrip([UInt8]()) == [])
        let mebibyte = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try roundTrip(mebibyte) == mebibyte)
        #expect(try roundTrip(Data(mebibyte)) == Data(mebibyte))
        #expect(try PostgresValue(Data()).decode(Data.self) == Data())
        #expect([UInt8].postgresType == .bytea)
    }

    @Test(arguments: [
        Int64(0), -1, 1, -1_000_000_000_000_001,  // around 1970
        -2_208_988_800_000_001,  // 1899-12-31T23:59:59.999999Z
        946_684_800_000_000,  // the PostgreSQL epoch
        2_147_483_648_123_456,  // after 2038-01-19
        4_102_444_800_654_321,  // 2100
    ])
    func timestamptz(_ micros: Int64) throws {
        let value = date(micros: micros)
        let decoded = try roundTrip(value)
        #expect(
            (decoded.timeIntervalSince1970 * 1_000_000).rounded() == (value.timeIntervalSince1970 * 1_000_000).rounded()
        )
    }

    @Test func timestamptzWireFormatAndInfinity() throws {
        let epoch = Date(timeIntervalSince1970: 946_684_800)
        #expect(try PostgresValue(epoch).bytes == [UInt8](repeating: 0, count: 8))
        #expect(throws: LibPQError.self) { try PostgresValue(Date(timeIntervalSince1970: .infinity)) }
        let infinity = PostgresValue(type: .timestamptz, bytes: [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: LibPQError.self) { try infinity.decode(Date.self) }
        let outOfRange = PostgresValue(type: .timestamptz, bytes: [0x80, 0, 0, 0, 0, 0, 0, 1])
        #expect(throws: LibPQError.self) { try outOfRange.decode(Date.self) }
    }

    @Test(arguments: [
        "0", "1", "-1", "0.5", "-0.000001", "12345.6789", "10000", "99999999", "1.2E+40", "-1.2E+40",
        "0.000000000000000000000000001234", "123456789012345678901234567890",
        "-12345678901234567.890123456789", "3.4028236692093846346337460743176821145E+38", "1E-128", "9E+127",
    ])
    func numeric(_ text: String) throws {
        let value = try #require(Decimal(string: text, locale: nil))
        #expect(try roundTrip(value) == value)
    }

    @Test func numericWireFormatMatchesPostgres() throws {
        // numeric_send('1.2E+40'): ndigits 2, weight 10, sign +, dscale 0, digits 1 2000.
        let large = try PostgresValue(try #require(Decimal(string: "1.2E+40", locale: nil)))
        #expect(large.bytes == [0, 2, 0, 10, 0, 0, 0, 0, 0, 1, 0x07, 0xD0])
        // numeric_send('0.000000000000000000000000001234'): ndigits 2, weight -7, dscale 30, digits 12 3400.
        let tiny = try PostgresValue(try #require(Decimal(string: "0.000000000000000000000000001234", locale: nil)))
        #expect(tiny.bytes == [0, 2, 0xFF, 0xF9, 0, 0, 0, 30, 0, 12, 0x0D, 0x48])
        // -12.5: ndigits 2, weight 0, sign -, dscale 1, digits 12 5000.
        let negative = try PostgresValue(Decimal(string: "-12.5", locale: nil) ?? 0)
        #expect(negative.bytes == [0, 2, 0, 0, 0x40, 0, 0, 1, 0, 12, 0x13, 0x88])
        #expect(try PostgresValue(Decimal(0)).bytes == [0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func numericSpecialValuesAreErrors() {
        #expect(throws: LibPQError.self) { try PostgresValue(Decimal.nan) }
        let nan = PostgresValue(type: .numeric, bytes: [0, 0, 0, 0, 0xC0, 0, 0, 0])
        #expect(throws: LibPQError.self) { try nan.decode(Decimal.self) }
        let infinity = PostgresValue(type: .numeric, bytes: [0, 0, 0, 0, 0xD0, 0, 0, 0])
        #expect(throws: LibPQError.self) { try infinity.decode(Decimal.self) }
        // 40 significant digits: 1 followed by 9999 x 9 and 1 (weight 9).
        var tooLong: [UInt8] = [0, 11, 0, 9, 0, 0, 0, 0, 0, 1]
        for _ in 0..<9 { tooLong += [0x27, 0x0F] }
        tooLong += [0, 1]
        #expect(throws: LibPQError.self) { try PostgresValue(type: .numeric, bytes: tooLong).decode(Decimal.self) }
    }

    @Test func uuid() throws {
        let value = UUID()
        #expect(try roundTrip(value) == value)
        let fixed = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        #expect(
            try PostgresValue(fixed).bytes == [
                0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
            ])
    }

    @Test func nullAndOptionals() throws {
        let none: Int64? = nil
        let null = try PostgresValue(none)
        #expect(null.isNull && null.type == .int8)
        #expect(null == .null(.int8))
        #expect(try null.decode(Int64?.self) == nil)
        #expect(throws: LibPQError.self) { try null.decode(Int64.self) }
        #expect(try PostgresValue(Int64?(5)).decode(Int64?.self) == 5)
    }

    @Test func wrongTypeIsADecodingError() throws {
        do {
            _ = try PostgresValue("text").decode(UUID.self)
            Issue.record("decoding text as UUID should fail")
        } catch let error as LibPQError {
            #expect(error.code == .decoding)
            #expect(error.message.contains("text") && error.message.contains("UUID"))
        }
    }
}
