import Foundation
import Testing

@testable import LibPQ

/// `copyOutBinary`: rows of a binary COPY TO STDOUT, field by field, and the connection idle afterwards
/// whatever went wrong.
@Suite struct CopyOutTests {
    static let copy = "COPY (SELECT n, label, data FROM t ORDER BY n) TO STDOUT (FORMAT binary)"

    @Test func everyRowArrivesFieldByFieldWithItsNulls() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute(
                """
                create table t (n bigint, label text, data bytea);
                insert into t select g, case when g % 3 = 0 then null else repeat('é', g % 5) end,
                    case when g % 2 = 0 then '\\x00ff'::bytea end from generate_series(1, 1000) g
                """)
            var seen: [(Int64, String?, Data?)] = []
            let rows = try connection.copyOutBinary(Self.copy) { row in
                #expect(row.fieldCount == 3)
                let n = try Int64.decode(from: try #require(try row.nextField()), type: .int8)
                let label = try row.nextField().map { try String.decode(from: $0, type: .text) }
                let data = try row.nextField().map { try Data.decode(from: $0, type: .bytea) }
                seen.append((n, label, data))
                // Past the last field: an error, not another row's bytes.
                #expect(throws: LibPQError.self) { try row.nextField() }
            }
            #expect(rows == 1000)
            #expect(seen.map(\.0) == Array(1...1000))
            for (n, label, data) in seen {
                #expect(label == (n % 3 == 0 ? nil : String(repeating: "é", count: Int(n % 5))))
                #expect(data == (n % 2 == 0 ? Data([0, 255]) : nil))
            }
            // No rows: the header and the trailer only.
            #expect(try connection.copyOutBinary("COPY (SELECT 1 WHERE false) TO STDOUT (FORMAT binary)") { _ in } == 0)
            let after = try connection.query("select 1").decode(Int32.self, row: 0, column: 0)
            #expect(after == 1)
        }
    }

    @Test func aServerErrorMidCopyIsThrownAndTheConnectionStaysUsable() throws {
        try TestDatabase.withSchema { connection, _ in
            var rows = 0
            // The division fails on the 500th row, after the first rows went out.
            #expect {
                try connection.copyOutBinary(
                    "COPY (SELECT 1 / (500 - g) FROM generate_series(1, 1000) g) TO STDOUT (FORMAT binary)"
                ) { _ in rows += 1 }
            } throws: { error in
                (error as? DatabaseError)?.sqlState.rawValue == "22012"
            }
            #expect(rows < 500)
            let after = try connection.query("select 2").decode(Int32.self, row: 0, column: 0)
            #expect(after == 2)
        }
    }

    @Test func whatTheBodyThrowsIsThrownAfterTheRestIsDrained() throws {
        struct Stop: Error {}
        try TestDatabase.withSchema { connection, _ in
            var rows = 0
            #expect(throws: Stop.self) {
                try connection.copyOutBinary(
                    "COPY (SELECT g FROM generate_series(1, 10000) g) TO STDOUT (FORMAT binary)"
                ) { _ in
                    rows += 1
                    if rows == 3 { throw Stop() }
                }
            }
            #expect(rows == 3)
            let after = try connection.query("select 3").decode(Int32.self, row: 0, column: 0)
            #expect(after == 3)
        }
    }

    @Test func aStatementThatIsNotACopyOutIsRefused() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n bigint)")
            let refused: [(sql: String, matches: @Sendable (any Error) -> Bool)] = [
                ("SELECT 1", { ($0 as? LibPQError)?.code == .copyFailed }),
                ("COPY t FROM STDIN (FORMAT binary)", { ($0 as? LibPQError)?.code == .copyFailed }),
                // Text COPY has no binary signature.
                ("COPY (SELECT 1) TO STDOUT", { ($0 as? LibPQError)?.code == .decoding }),
                (
                    "COPY (SELECT nothing) TO STDOUT (FORMAT binary)",
                    {
                        ($0 as? DatabaseError)?.sqlState == .undefinedColumn
                    }
                ),
            ]
            for (sql, matches) in refused {
                #expect(performing: { try connection.copyOutBinary(sql) { _ in } }, throws: matches)
            }
            let after = try connection.query("select 4").decode(Int32.self, row: 0, column: 0)
            #expect(after == 4)
        }
    }
}
