import Foundation
import LibPQ
import Testing

/// Every supported type bound as a parameter, compared with a server-side literal and selected back.
@Suite struct ServerRoundTripTests {
    /// Binds `value`, checks the server sees the same value as `literal`, and decodes it back.
    func check<T: PostgresEncodable & PostgresDecodable & Equatable>(
        _ connection: Connection, _ value: T, equals literal: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let sql = "select $1 = \(literal), $1, pg_typeof($1)::text"
        let result = try connection.query(sql, [PostgresValue(value)])
        let same = try result.decode(Bool.self, row: 0, column: 0)
        #expect(same, "server saw a different value than \(literal)", sourceLocation: sourceLocation)
        #expect(try result.decode(T.self, row: 0, column: 1) == value, sourceLocation: sourceLocation)
        #expect(result.columns[1].type == T.postgresType, sourceLocation: sourceLocation)
    }

    @Test func scalars() throws {
        try TestDatabase.withSchema { connection, _ in
            try check(connection, Int16.min, equals: "'-32768'::smallint")
            try check(connection, Int16.max, equals: "'32767'::smallint")
            try check(connection, Int32.min, equals: "'-2147483648'::integer")
            try check(connection, Int64.max, equals: "'9223372036854775807'::bigint")
            try check(connection, Int64.min, equals: "'-9223372036854775808'::bigint")
            try check(connection, Int(42), equals: "42::bigint")
            try check(connection, Float(-1.5), equals: "'-1.5'::real")
            try check(connection, Float.infinity, equals: "'Infinity'::real")
            try check(connection, Double.pi, equals: "pi()")
            try check(connection, -Double.infinity, equals: "'-Infinity'::float8")
            try check(connection, true, equals: "true")
            try check(connection, "żółć 👩‍👩‍👧‍👦 'quoted'", equals: "'żółć 👩‍👩‍👧‍👦 ''quoted'''")
            try check(connection, "", equals: "''::text")
            try check(connection, [UInt8]([0, 1, 255]), equals: "'\\x0001ff'::bytea")
            try check(connection, Data(), equals: "''::bytea")
            let uuid = try #require(UUID(uuidString: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"))
            try check(connection, uuid, equals: "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid")
        }
    }

    @Test func nanSurvivesTheServer() throws {
        try TestDatabase.withSchema { connection, _ in
            let result = try connection.query("select $1, $2", [PostgresValue(Double.nan), PostgresValue(Float.nan)])
            #expect(try result.decode(Double.self, row: 0, column: 0).isNaN)
            #expect(try result.decode(Float.self, row: 0, column: 1).isNaN)
        }
    }

    @Test func largeBytea() throws {
        try TestDatabase.withSchema { connection, _ in
            let mebibyte = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let result = try connection.query("select $1, length($1), md5($1)", [PostgresValue(mebibyte)])
            #expect(try result.decode([UInt8].self, row: 0, column: 0) == mebibyte)
            #expect(try result.decode(Int32.self, row: 0, column: 1) == 1 << 20)
        }
    }

    @Test func timestamps() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("SET TimeZone = 'UTC'; SET DateStyle = 'SQL, DMY'")  // binary ignores DateStyle
            try check(
                connection, date(micros: -2_208_988_800_000_001), equals: "'1899-12-31 23:59:59.999999+00'::timestamptz"
            )
            try check(
                connection, date(micros: 2_147_483_648_123_456), equals: "'2038-01-19 03:14:08.123456+00'::timestamptz")
            try check(
                connection, date(micros: 4_102_444_800_654_321), equals: "'2100-01-01 00:00:00.654321+00'::timestamptz")
            let result = try connection.query("select 'infinity'::timestamptz")
            #expect(throws: LibPQError.self) { try result.decode(Date.self, row: 0, column: 0) }
        }
    }

    @Test(arguments: [
        "0", "-1", "12345.6789", "1.2E+40", "-1.2E+40", "0.000000000000000000000000001234",
        "123456789012345678901234567890", "-12345678901234567.890123456789", "99999999", "0.00010000",
    ])
    func numeric(_ text: String) throws {
        try TestDatabase.withSchema { connection, _ in
            let value = try #require(Decimal(string: text, locale: nil))
            try check(connection, value, equals: "'\(text)'::numeric")
        }
    }

    @Test func randomNumericsMatchTheServersParsing() throws {
        try TestDatabase.withSchema { connection, _ in
            var random = SeededGenerator(seed: RandomizedCodecTests.seed)
            let values = try (0..<500).map { _ in try #require(RandomizedCodecTests.randomDecimal(&random)) }
            let texts = values.map { "\($0)" }
            let result = try connection.query(
                "select bool_and(a = b::numeric), array_agg(a order by n) "
                    + "from unnest($1::numeric[], $2::text[]) with ordinality as x(a, b, n)",
                [PostgresValue(values), PostgresValue(texts)])
            #expect(try result.decode(Bool.self, row: 0, column: 0), "seed \(RandomizedCodecTests.seed)")
            #expect(try result.decode([Decimal].self, row: 0, column: 1) == values)
        }
    }

    @Test func numericComputedByTheServer() throws {
        try TestDatabase.withSchema { connection, _ in
            let result = try connection.query("select 1.2e40::numeric, 1234e-30::numeric, 'NaN'::numeric")
            #expect(try result.decode(Decimal.self, row: 0, column: 0) == Decimal(string: "1.2E+40", locale: nil))
            #expect(try result.decode(Decimal.self, row: 0, column: 1) == Decimal(string: "1.234E-27", locale: nil))
            #expect(throws: LibPQError.self) { try result.decode(Decimal.self, row: 0, column: 2) }
        }
    }

    @Test func nullsAreExplicit() throws {
        try TestDatabase.withSchema { connection, _ in
            let none: String? = nil
            let result = try connection.query("select $1 is null, $1, $2", [PostgresValue(none), .null(.int8)])
            #expect(try result.decode(Bool.self, row: 0, column: 0))
            #expect(result.isNull(row: 0, column: 1))
            #expect(try result.decodeIfPresent(String.self, row: 0, column: 1) == nil)
            #expect(try result.decode(Int64?.self, row: 0, column: 2) == nil)
            #expect(result.value(row: 0, column: 2) == .null(.int8))
            #expect(throws: LibPQError.self) { try result.decode(String.self, row: 0, column: 1) }
        }
    }

    @Test func wrongSwiftTypeNamesColumnAndTypes() throws {
        try TestDatabase.withSchema { connection, _ in
            let result = try connection.query("select 1::bigint as answer")
            do {
                _ = try result.decode(Int16.self, row: 0, column: 0)
                Issue.record("decoding bigint as Int16 must fail")
            } catch let error as LibPQError {
                #expect(error.code == .decoding)
                #expect(error.message.contains("answer") && error.message.contains("bigint"))
                #expect(error.message.contains("Int16"))
            }
            #expect(result.columnIndex(named: "answer") == 0)
            #expect(result.columns == [Column(name: "answer", type: .int8)])
        }
    }

    @Test func arraysBindWithAnyAndUnnest() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table item (id bigint primary key, name text, tag uuid)")
            let ids = (1...50).map(Int64.init)
            let names = ids.map { "item \($0) ✓" }
            let tags = ids.map { _ in UUID() }
            let inserted = try connection.query(
                "insert into item select * from unnest($1::bigint[], $2::text[], $3::uuid[])",
                [PostgresValue(ids), PostgresValue(names), PostgresValue(tags)])
            #expect(inserted.affectedRows == 50)
            let wanted: [Int64] = [3, 7, 49, 1000]
            let result = try connection.query(
                "select id, name from item where id = any($1) order by id", [PostgresValue(wanted)])
            #expect(result.rowCount == 3)
            #expect(try (0..<3).map { try result.decode(Int64.self, row: $0, column: 0) } == [3, 7, 49])
            #expect(try result.decode(String.self, row: 1, column: 1) == "item 7 ✓")
            let byTag = try connection.query(
                "select count(*) from item where tag = any($1)", [PostgresValue(Array(tags[0..<5]))])
            #expect(try byTag.decode(Int64.self, row: 0, column: 0) == 5)
        }
    }

    @Test func everyArrayTypeRoundTrips() throws {
        try TestDatabase.withSchema { connection, _ in
            func same<T: PostgresEncodable & PostgresDecodable & Equatable>(_ value: T, _ sqlType: String) throws {
                let result = try connection.query(
                    "select $1, array(select unnest($1::\(sqlType)))", [PostgresValue(value)])
                #expect(try result.decode(T.self, row: 0, column: 0) == value)
                #expect(try result.decode(T.self, row: 0, column: 1) == value)
            }
            try same([Int16.min, Int16.max], "smallint[]")
            try same([Int32?.none, 5], "integer[]")
            try same([Int64.min, 0, Int64.max], "bigint[]")
            try same([Float(1.5), -.infinity], "real[]")
            try same([Double(2.5), .greatestFiniteMagnitude], "float8[]")
            try same([true, false, nil] as [Bool?], "boolean[]")
            try same(["a", nil, "😀", ""] as [String?], "text[]")
            try same([[UInt8]([1, 2]), []], "bytea[]")
            try same([date(micros: -1), date(micros: 2_147_483_648_000_001)], "timestamptz[]")
            try same([Decimal(string: "1.2E+40", locale: nil), Decimal(string: "-0.5", locale: nil)], "numeric[]")
            try same([UUID(), UUID()], "uuid[]")
            try same([String](), "text[]")
            let empty = try connection.query("select '{}'::int8[], array[]::text[]")
            #expect(try empty.decode([Int64].self, row: 0, column: 0) == [])
            #expect(try empty.decode([String].self, row: 0, column: 1) == [])
        }
    }

    @Test func preparedStatements() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.prepare("add", "select $1 + $2", types: [.int8, .int8])
            let result = try connection.queryPrepared("add", [PostgresValue(Int64(40)), PostgresValue(Int64(2))])
            #expect(try result.decode(Int64.self, row: 0, column: 0) == 42)
            #expect(throws: DatabaseError.self) { try connection.prepare("add", "select 1") }
            do {
                _ = try connection.queryPrepared("add", [PostgresValue("x"), PostgresValue(Int64(2))])
                Issue.record("text bound to an int8 parameter must fail")
            } catch let error as DatabaseError {
                #expect(error.sql == "select $1 + $2")
            }
        }
    }
}
