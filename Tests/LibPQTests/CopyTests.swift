import Foundation
import LibPQ
import Testing

@Suite struct CopyTests {
    @Test func binaryCopyOfHundredThousandRows() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute(
                "create table measurement (id bigint, label text, amount numeric, at timestamptz, ok boolean)")
            let start = date(micros: 1_700_000_000_000_000)
            var rows: [[PostgresValue]] = []
            rows.reserveCapacity(100_000)
            for i in 0..<100_000 {
                rows.append([
                    try PostgresValue(Int64(i)),
                    try PostgresValue("label \(i) ✓"),
                    try PostgresValue(Decimal(i) / 100),
                    try PostgresValue(start.addingTimeInterval(Double(i))),
                    i % 10 == 0 ? .null(.bool) : try PostgresValue(i % 2 == 1),
                ])
            }
            let copied = try connection.copyInBinary(
                #"COPY "measurement" ("id", "label", "amount", "at", "ok") FROM STDIN (FORMAT binary)"#, rows: rows)
            #expect(copied == 100_000)
            let count = try connection.query("select count(*), count(ok) from measurement")
            #expect(try count.decode(Int64.self, row: 0, column: 0) == 100_000)
            #expect(try count.decode(Int64.self, row: 0, column: 1) == 90_000)
            let row = try connection.query(
                "select label, amount, at, ok from measurement where id = $1", [PostgresValue(Int64(12_345))])
            #expect(try row.decode(String.self, row: 0, column: 0) == "label 12345 ✓")
            #expect(try row.decode(Decimal.self, row: 0, column: 1) == Decimal(string: "123.45", locale: nil))
            #expect(try row.decode(Date.self, row: 0, column: 2) == start.addingTimeInterval(12_345))
            #expect(try row.decode(Bool?.self, row: 0, column: 3) == true)
        }
    }

    @Test func copyThroughQueryIsRefusedCleanly() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n integer)")
            for sql in ["copy (select 1 from generate_series(1, 1000)) to stdout", "copy t from stdin"] {
                do {
                    try connection.execute(sql)
                    Issue.record("\(sql) must be refused")
                } catch let error as LibPQError {
                    #expect(error.code == .protocolViolation)
                }
                #expect(connection.transactionStatus == .idle)
                #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 0)
            }
        }
    }

    @Test func rejectedRowRollsBackAndLeavesConnectionUsable() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n integer not null)")
            let rows = [[try PostgresValue(Int32(1))], [PostgresValue.null(.int4)]]
            do {
                try connection.copyInBinary("COPY t (n) FROM STDIN (FORMAT binary)", rows: rows)
                Issue.record("NULL into a NOT NULL column must fail")
            } catch let error as DatabaseError {
                #expect(error.sqlState == .notNullViolation)
            }
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 0)
            #expect(throws: LibPQError.self) { try connection.copyInBinary("select 1", rows: [[PostgresValue]]()) }
            #expect(try connection.query("select 2").decode(Int32.self, row: 0, column: 0) == 2)
        }
    }

    /// One tuple: a field count, then an `int4` and a `text` field (or NULL).
    static func tuple(_ number: Int32, _ label: String?) -> [UInt8] {
        var bytes: [UInt8] = [0, 2, 0, 0, 0, 4]
        withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
        guard let label else { return bytes + [0xFF, 0xFF, 0xFF, 0xFF] }
        withUnsafeBytes(of: Int32(label.utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
        return bytes + Array(label.utf8)
    }

    @Test func tuplesWrittenInPiecesArriveWholeAndAThrowingBodyCopiesNothing() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n integer not null, label text)")
            let sql = "COPY t (n, label) FROM STDIN (FORMAT binary)"
            // Three writes, the second ending inside a tuple and the third finishing it.
            let second = Self.tuple(2, "zwei") + Self.tuple(3, nil)
            let copied = try connection.withCopyInBinary(sql) { writer in
                try writer.write(Self.tuple(1, "one"))
                try writer.write(Array(second.prefix(7)))
                try writer.write(Array(second.dropFirst(7)))
            }
            #expect(copied == 3)
            let rows = try connection.query("select n, label from t order by n")
            #expect(try (0..<3).map { try rows.decode(String?.self, row: $0, column: 1) } == ["one", "zwei", nil])

            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try connection.withCopyInBinary(sql) { writer in
                    try writer.write(Self.tuple(4, "four"))
                    throw Stop()
                }
            }
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 3)
            // A server error for a tuple (NULL into NOT NULL) arrives when the COPY ends.
            #expect {
                try connection.withCopyInBinary(sql) { writer in
                    try writer.write([0, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
                }
            } throws: { error in
                (error as? DatabaseError)?.sqlState == .notNullViolation
            }
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 3)
        }
    }
}
