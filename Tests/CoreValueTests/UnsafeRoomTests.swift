@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// What moved into (or out of) `Sources/CoreValue/Unsafe`: the process-wide tables under one lock, and the two
/// byte-level operations that are now plain Swift (UUID order, temporary keys), checked against what they
/// replaced.
@Suite struct UnsafeRoomTests {
    @Test func uuidsOrderAsTheirBytesDo() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededRandom(seed: seed)
        func uuid() -> UUID {
            // Few distinct bytes, so that long common prefixes (and equal halves) occur.
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in 0..<16 { bytes[index] = [0x00, 0x7F, 0x80, 0xFF][Int(random.next() % 4)] }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
        for _ in 0..<2_000 {
            let (a, b) = (uuid(), uuid())
            // Upper-case hexadecimal digits order as the bytes they spell.
            let expected = a.uuidString < b.uuidString ? -1 : (a.uuidString == b.uuidString ? 0 : 1)
            let found = ValueOrder.compare(.uuid(a), .uuid(b))
            #expect(found == expected, "seed \(seed): \(a) against \(b)")
            #expect(ValueOrder.compare(.uuid(a), .uuid(a)) == 0)
        }
    }

    @Test func temporaryKeysShareTheProcessPrefixAndCountUp() throws {
        func bytes(_ id: ManagedObjectID) throws -> [UInt8] {
            guard case .temporary(let uuid) = id.key else { throw CocoaError(.coderInvalidValue) }
            let u = uuid.uuid
            return [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        }
        func counter(_ bytes: [UInt8]) -> UInt64 { bytes[8...].reduce(0) { $0 << 8 | UInt64($1) } }
        let first = try bytes(.temporary("A"))
        let second = try bytes(.temporary("B"))
        #expect(first[..<8] == second[..<8])
        // Other tests may take numbers in between; never the same one twice, and in order from one thread.
        #expect(counter(second) > counter(first))
    }

    @Test func aLockedTableMakesEachValueOnceForAllThreads() {
        final class Made: Sendable {
            let number: Int
            init(_ number: Int) { self.number = number }
        }
        let table = LockedTable<String, Made>()
        let keys = (0..<50).map { "key \($0)" }
        let results = LockedTable<Int, [ObjectIdentifier]>()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let seen = keys.shuffled().sorted().map { key in
                ObjectIdentifier(table.value(for: key) { count in Made(count) })
            }
            _ = results.keep(seen, for: worker)
        }
        let first = results[0]
        for worker in 1..<8 { #expect(results[worker] == first) }
        // Numbered densely in the order first made: the entity slots' use.
        let numbers = keys.compactMap { table[$0]?.number }
        #expect(Set(numbers) == Set(0..<50))
        // `keep` keeps the first value for a key.
        let kept = table.keep(Made(-1), for: "key 0")
        #expect(kept === table["key 0"])
        #expect(kept.number != -1)
        #expect(table["absent"] == nil)
    }
}
