@testable import LibPQ
import Testing

/// COPY data goes to libpq in pieces whose length fits its `Int32` parameter.
@Suite struct CopyChunkingTests {
    @Test(arguments: [1, 7, 4096])
    func rowsSplitAcrossPiecesArriveIntact(_ pieceSize: Int) throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n bigint, label text)")
            let rows = try (0..<500).map { n in
                [try PostgresValue(Int64(n)), try PostgresValue(String(repeating: "é", count: n % 37))]
            }
            let copied = try connection.copyInBinary(
                "COPY t (n, label) FROM STDIN (FORMAT binary)", rows: rows, pieceSize: pieceSize)
            #expect(copied == 500)
            let check = try connection.query("select count(*), sum(length(label)) from t where length(label) = n % 37")
            #expect(try check.decode(Int64.self, row: 0, column: 0) == 500)
            let expected = (0..<500).reduce(0) { $0 + $1 % 37 }
            #expect(try check.decode(Int64.self, row: 0, column: 1) == Int64(expected))
        }
    }
}
