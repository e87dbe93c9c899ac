@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

@testable import CoreValuePostgres

@Suite struct SQLTests {
    @Test func valuesBecomeNumberedBinds() {
        let sql: SQL =
            "SELECT * FROM \(SQLIdentifier("Car")) WHERE \(SQLIdentifier("name")) = \(bind: .text("x'; DROP TABLE \"Car\"; --")) AND \(SQLIdentifier("doors")) > \(bind: .int64(2))"
        #expect(sql.text == #"SELECT * FROM "Car" WHERE "name" = $1 AND "doors" > $2"#)
        #expect(sql.binds == [.text("x'; DROP TABLE \"Car\"; --"), .int64(2)])
        #expect(sql.description == sql.text)
    }

    @Test func identifiersAreQuotedWithQuotesDoubled() {
        #expect(SQLIdentifier("a\"b").quoted == #""a""b""#)
        #expect(SQLIdentifier("Car", schema: "my \"s\"").quoted == #""my ""s"""."Car""#)
        #expect(SQLIdentifier("").quoted == #""""#)
        // A quote followed by a combining mark is one Character but still a quote byte for the server.
        #expect(SQLIdentifier("a\"\u{301}b").quoted == "\"a\"\"\u{301}b\"")
        #expect(SQLIdentifier("é\"").quoted == "\"é\"\"\"")
    }

    @Test func fragmentsAreRenumbered() {
        let first: SQL = "a = \(bind: .int64(1))"
        let second: SQL = "b = \(bind: .int64(2))"
        let joined: SQL = "WHERE \(SQL.joined([first, second], separator: " AND ")) LIMIT \(bind: .int64(3))"
        #expect(joined.text == "WHERE a = $1 AND b = $2 LIMIT $3")
        #expect(joined.binds == [.int64(1), .int64(2), .int64(3)])
    }

    @Test func typedBindsCarryTheirCast() {
        let sql: SQL =
            "x = ANY(\(typedBind: .int64Array([1, 2]))) AND y = ANY(\(typedBind: .array(.string, [.string("a")])))"
        #expect(sql.text == "x = ANY($1::bigint[]) AND y = ANY($2::text[])")
    }

    @Test func aCopyWritesIntegersBooleansAndUUIDsAsTypedLiterals() throws {
        let uuid = try #require(UUID(uuidString: "56AA2816-503C-464E-B4AE-405B16AC704E"))
        let sql: SQL =
            "SELECT a FROM t WHERE k = ANY(\(typedBind: .array(.int64, [.int64(.min), .int64(0), .null, .int64(42)]))) "
            + "AND s = \(bind: .scalar(.int16, .int16(-7))) AND b = \(bind: .scalar(.bool, .bool(false))) "
            + "AND u = ANY(\(bind: .array(.uuid, [.uuid(uuid)]))) AND n = \(bind: .scalar(.int32, .null))"
        #expect(
            sql.binaryCopyText
                == "COPY (SELECT a FROM t WHERE k = ANY(('{-9223372036854775808,0,NULL,42}'::bigint[])::bigint[]) "
                + "AND s = ('-7'::smallint) AND b = ('f'::boolean) "
                + "AND u = ANY(('{56AA2816-503C-464E-B4AE-405B16AC704E}'::uuid[])) AND n = (NULL::integer)) "
                + "TO STDOUT (FORMAT binary)")
    }

    @Test func aCopyWritesEveryIntegerAsItsDecimalDigits() {
        var numbers: [Int64] = [.min, .max, -1, 0, 1, 9, 10, -10, 99, 100]
        for power in 1...18 {
            let magnitude = (0..<power).reduce(Int64(1)) { value, _ in value * 10 }
            numbers += [magnitude - 1, magnitude, magnitude + 1, -magnitude, Int64.random(in: -magnitude...magnitude)]
        }
        for number in numbers {
            let sql: SQL = "SELECT \(bind: .int64(number))"
            #expect(sql.binaryCopyText == "COPY (SELECT ('\(number)'::bigint)) TO STDOUT (FORMAT binary)")
        }
    }

    @Test func aCopyIsNotWrittenForTextOrOtherValues() {
        let hostile = "x'); DROP TABLE t; --"
        for bind: SQLBind in [
            .text(hostile), .array(.string, [.string(hostile)]), .scalar(.double, .double(1.5)),
            .scalar(.date, .date(Date(timeIntervalSince1970: 0))), .scalar(.data, .data(Data([39]))),
            .scalar(.decimal, .decimal(1)),
            // A value of another type than its bind's.
            .scalar(.int64, .string(hostile)), .array(.int64, [.int64(1), .string(hostile)]),
        ] {
            let sql: SQL = "SELECT 1 WHERE x = \(bind: bind) AND y = \(bind: .int64(1))"
            #expect(sql.binaryCopyText == nil)
        }
        #expect(SQL("SELECT 1").binaryCopyText == "COPY (SELECT 1) TO STDOUT (FORMAT binary)")
    }

    @Test func rawTextNeedsTheUnsafeInitialiser() {
        let raw = SQL(unsafeRaw: "SELECT 1")
        #expect(raw.text == "SELECT 1")
        #expect(raw.binds.isEmpty)
        #expect(SQL().isEmpty)
    }

    @Test func sha256MatchesKnownVectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hex(long) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: 0x61, count: 1_000)).count == 64)
    }
}
