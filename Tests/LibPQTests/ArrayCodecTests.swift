import Foundation
import LibPQ
import Testing

@Suite struct ArrayCodecTests {
    @Test func arraysOfEveryType() throws {
        #expect(try roundTrip([Int16.min, 0, Int16.max]) == [Int16.min, 0, Int16.max])
        #expect(try roundTrip([Int32.min, 0, Int32.max]) == [Int32.min, 0, Int32.max])
        #expect(try roundTrip([Int64.min, 0, Int64.max]) == [Int64.min, 0, Int64.max])
        #expect(try roundTrip([Int.min, 7]) == [Int.min, 7])
        #expect(try roundTrip([Float(1.5), -.infinity]) == [1.5, -.infinity])
        #expect(try roundTrip([Double(1.5), .infinity]) == [1.5, .infinity])
        #expect(try roundTrip([true, false]) == [true, false])
        #expect(try roundTrip(["a", "", "🚀"]) == ["a", "", "🚀"])
        #expect(try roundTrip([[UInt8](), [1, 2, 3]]) == [[], [1, 2, 3]])
        #expect(try roundTrip([Data([1]), Data()]) == [Data([1]), Data()])
        let dates = [date(micros: -1_000_000_000_000_001), date(micros: 2_147_483_648_123_456)]
        #expect(try roundTrip(dates) == dates)
        let decimals = [Decimal(string: "1.2E+40", locale: nil), Decimal(string: "-0.001", locale: nil)].compactMap { $0 }
        #expect(try roundTrip(decimals) == decimals)
        let uuids = [UUID(), UUID()]
        #expect(try roundTrip(uuids) == uuids)
    }

    @Test func arrayTypes() {
        #expect([Int64].postgresType == .int8Array)
        #expect([Int16].postgresType == .int2Array)
        #expect([Int32?].postgresType == .int4Array)
        #expect([String].postgresType == .textArray)
        #expect([[UInt8]].postgresType == .byteaArray)
        #expect([Data].postgresType == .byteaArray)
        #expect([Date].postgresType == .timestamptzArray)
        #expect([Decimal].postgresType == .numericArray)
        #expect([UUID].postgresType == .uuidArray)
        #expect([Bool].postgresType == .boolArray)
        #expect([Float].postgresType == .float4Array)
        #expect([Double].postgresType == .float8Array)
        #expect(PostgresType.int8Array.description == "bigint[]")
        #expect(PostgresType.int8.description == "bigint")
        #expect(PostgresType(rawValue: 1234).description == "oid 1234")
    }

    @Test func emptyArray() throws {
        let empty = try PostgresValue([Int64]())
        // ndim 0, no NULLs, element OID 20.
        #expect(empty.bytes == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20])
        #expect(try empty.decode([Int64].self) == [])
        #expect(try roundTrip([String]()) == [])
    }

    @Test func arraysWithNulls() throws {
        let values: [String?] = ["a", nil, "c", nil]
        #expect(try roundTrip(values) == values)
        let ints: [Int64?] = [nil]
        #expect(try roundTrip(ints) == ints)
        #expect(throws: LibPQError.self) { try PostgresValue(values).decode([String].self) }
    }

    @Test func arrayWireFormat() throws {
        let value = try PostgresValue([Int32(1), Int32(-1)])
        #expect(value.bytes == [
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23,  // 1 dimension, no NULLs, int4
            0, 0, 0, 2, 0, 0, 0, 1,  // 2 elements, lower bound 1
            0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0xFF, 0xFF, 0xFF, 0xFF,
        ])
    }

    @Test func multidimensionalAndMalformedArraysAreErrors() {
        #expect(throws: LibPQError.self) { try PostgresValue([[Int32(1)]]) }
        let twoDimensional = PostgresValue(type: .int4Array, bytes: [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 23])
        #expect(throws: LibPQError.self) { try twoDimensional.decode([Int32].self) }
        let truncated = PostgresValue(type: .int4Array, bytes: [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 5])
        #expect(throws: LibPQError.self) { try truncated.decode([Int32].self) }
        #expect(throws: LibPQError.self) { try PostgresValue(Int32(1)).decode([Int32].self) }
    }
}
