import Foundation
import LibPQ
import Testing

/// SplitMix64: a small seeded generator so that failures can be replayed from the printed seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct RandomizedCodecTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["LIBPQ_TEST_SEED"] ?? "") ?? 20_261_130

    /// A random exact decimal: up to 38 significant digits, exponent within Decimal's range.
    static func randomDecimal(_ random: inout SeededGenerator) -> Decimal? {
        let digitCount = Int.random(in: 1...38, using: &random)
        var digits = String(Int.random(in: 1...9, using: &random))
        for _ in 1..<digitCount { digits += String(Int.random(in: 0...9, using: &random)) }
        let exponent = Int.random(in: -90...(89 - digitCount), using: &random)
        let sign = Bool.random(using: &random) ? "-" : ""
        return Decimal(string: "\(sign)\(digits)E\(exponent)", locale: nil)
    }

    @Test func numericRoundTripsExactly() throws {
        var random = SeededGenerator(seed: Self.seed)
        for _ in 0..<2_000 {
            let value = try #require(Self.randomDecimal(&random))
            #expect(try roundTrip(value) == value, "seed \(Self.seed): \(value)")
        }
    }

    @Test func randomBytesNeverCrashADecoder() {
        var random = SeededGenerator(seed: Self.seed)
        let types: [PostgresType] = [
            .bool, .bytea, .int2, .int4, .int8, .text, .float4, .float8, .timestamptz, .numeric, .uuid,
            .int4Array, .textArray, .numericArray, .uuidArray,
        ]
        var failures = 0
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...40, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            let type = types[Int.random(in: 0..<types.count, using: &random)]
            let value = PostgresValue(type: type, bytes: bytes)
            // Each either decodes or throws LibPQError; a crash fails the whole run.
            for decode in Self.decoders {
                do { try decode(value) } catch is LibPQError { failures += 1 } catch {
                    Issue.record("seed \(Self.seed): unexpected error \(error)")
                }
            }
        }
        #expect(failures > 0)
    }

    static let decoders: [@Sendable (PostgresValue) throws -> Void] = [
        { _ = try $0.decode(Bool.self) }, { _ = try $0.decode(Int16.self) }, { _ = try $0.decode(Int32.self) },
        { _ = try $0.decode(Int64.self) }, { _ = try $0.decode(Int.self) }, { _ = try $0.decode(Float.self) },
        { _ = try $0.decode(Double.self) }, { _ = try $0.decode(String.self) }, { _ = try $0.decode([UInt8].self) },
        { _ = try $0.decode(Data.self) }, { _ = try $0.decode(Date.self) }, { _ = try $0.decode(Decimal.self) },
        { _ = try $0.decode(UUID.self) }, { _ = try $0.decode([Int32?].self) }, { _ = try $0.decode([String].self) },
        { _ = try $0.decode([Decimal].self) }, { _ = try $0.decode([UUID?].self) },
    ]
}
