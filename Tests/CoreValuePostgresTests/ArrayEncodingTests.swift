@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// The store's one-pass array encoder writes exactly the bytes the driver's generic encoder writes, for
/// every attribute type, with NULLs and empty arrays.
@Suite struct ArrayEncodingTests {
    static func randomValues(_ type: AttributeType, _ random: inout SeededRandom) -> [AttributeValue] {
        (0..<Int(random.next() % 6)).map { _ -> AttributeValue in
            if random.next() % 4 == 0 { return .null }
            let bits = random.next()
            switch type {
            case .int16: return .int16(Int16(truncatingIfNeeded: bits))
            case .int32: return .int32(Int32(truncatingIfNeeded: bits))
            case .int64: return .int64(Int64(bitPattern: bits))
            case .float: return .float(Float(Int32(truncatingIfNeeded: bits)) / 7)
            case .double: return .double(Double(Int64(bitPattern: bits)) / 3)
            case .bool: return .bool(bits % 2 == 0)
            case .string:
                return .string(["", "a", "ÄÖ", "İ😀", String(repeating: "x", count: Int(bits % 40))][Int(bits % 5)])
            case .data: return .data(Data((0..<Int(bits % 9)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
            case .date: return .date(Date(timeIntervalSince1970: Double(bits % 4_000_000_000) / 8))
            case .decimal: return .decimal(Decimal(Int64(bitPattern: bits) % 1_000_000_007) / 100)
            case .uuid: return .uuid(UUID())
            case .uri:
                let paths = ["", "a", "%C3%84", "x?y=1#z", String(repeating: "p/", count: Int(bits % 20))]
                return URL(string: "https://example.com/" + paths[Int(bits % 5)]).map(AttributeValue.uri) ?? .null
            }
        }
    }

    static func driverBytes(_ values: [AttributeValue], _ type: AttributeType) throws -> PostgresValue {
        func typed<T: PostgresArrayElement & PostgresEncodable & PostgresDecodable>(_ extract: (AttributeValue) -> T?)
            throws -> PostgresValue
        {
            try PostgresValue(values.map { $0.isNull ? nil : extract($0) })
        }
        switch type {
        case .int16: return try typed { if case .int16(let v) = $0 { v } else { nil } }
        case .int32: return try typed { if case .int32(let v) = $0 { v } else { nil } }
        case .int64: return try typed { if case .int64(let v) = $0 { v } else { nil } }
        case .float: return try typed { if case .float(let v) = $0 { v } else { nil } }
        case .double: return try typed { if case .double(let v) = $0 { v } else { nil } }
        case .bool: return try typed { if case .bool(let v) = $0 { v } else { nil } }
        case .string: return try typed { if case .string(let v) = $0 { v } else { nil } }
        case .data: return try typed { if case .data(let v) = $0 { v } else { nil } }
        case .date: return try typed { if case .date(let v) = $0 { v } else { nil } }
        case .decimal: return try typed { if case .decimal(let v) = $0 { v } else { nil } }
        case .uuid: return try typed { if case .uuid(let v) = $0 { v } else { nil } }
        case .uri: return try typed { if case .uri(let v) = $0 { v.absoluteString } else { nil } }
        }
    }

    @Test(arguments: AttributeType.allCases)
    func theOnePassEncoderMatchesTheDriver(_ type: AttributeType) throws {
        var random = SeededRandom(seed: 11)
        for round in 0..<200 {
            let values = Self.randomValues(type, &random)
            let ours = try ArrayEncoding.encode(values, as: type)
            let driver = try Self.driverBytes(values, type)
            #expect(ours == driver, "seed 11, \(type) round \(round): \(values.count) values")
        }
    }

    @Test func aValueOfAnotherTypeOrANulIsRefused() {
        #expect(throws: PostgresStoreError.self) { try ArrayEncoding.encode([.int32(1)], as: .int64) }
        #expect(throws: PostgresStoreError.self) { try ArrayEncoding.encode([.string("a\u{0}b")], as: .string) }
        // Fixed-width arrays are written in place: a bad element after good ones and NULLs still fails whole.
        #expect(throws: PostgresStoreError.self) {
            try ArrayEncoding.encode([.int64(1), .null, .string("2")], as: .int64)
        }
        #expect(throws: LibPQError.self) {
            try ArrayEncoding.encode(
                [.date(Date()), .date(Date(timeIntervalSinceReferenceDate: .infinity))], as: .date)
        }
    }
}
