@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

/// The streamed save's probe ("may a stored row share an identifier with these new ones?") must be answered by
/// the identifier's index whatever the table's statistics say: during a bulk load the table is new or freshly
/// truncated, and a probe planned as a sequential scan read the whole table on every save (425 ms at 3 million
/// rows). The plan is asserted, not timed.
@Suite struct ProbePlanTests {
    /// The plan's lines, from `EXPLAIN` of the probe with its binds.
    static func plan(_ connection: Connection, _ sql: SQL) throws -> [String] {
        let parameters = try sql.binds.map(BindEncoding.postgresValue)
        let plan = try connection.query("EXPLAIN " + sql.text, parameters)
        return try (0..<plan.rowCount).map { try plan.decode(String.self, row: $0, column: 0) }
    }

    @Test(arguments: [
        (Attribute("id", .string, unique: true), AttributeValue.string("k50000"), "text"),
        (Attribute("id", .int64, unique: true), AttributeValue.int64(50_000), "bigint"),
        (Attribute("id", .int64, unique: true), AttributeValue.int64(-1), "bigint"),
        (Attribute("id", .int64, unique: true), AttributeValue.int64(200_000), "bigint"),
    ])
    func theProbeReadsTheIndexOfAnUnanalysedTable(key: Attribute, lowest: AttributeValue, type: String) throws {
        try TestDatabase.withSchema { url, schema in
            let connection = try Connection(url)
            defer { connection.close() }
            let table = "\(Connection.quoteIdentifier(schema)).\"Probe\""
            let collate = type == "text" ? " COLLATE \"C\"" : ""
            let value = type == "text" ? "'k' || g" : "g"
            // No statistics, and none coming: autovacuum is off for the table.
            try connection.execute(
                """
                CREATE SCHEMA \(Connection.quoteIdentifier(schema));
                CREATE TABLE \(table) ("_pk" bigint generated always as identity primary key, "_version" bigint,
                    "id" \(type)\(collate) NOT NULL UNIQUE) WITH (autovacuum_enabled = off);
                INSERT INTO \(table) ("_version", "id") SELECT 1, \(value) FROM generate_series(1, 100000) AS g
                """)
            let probe = WriteStatements(schema: schema).anyRow(in: "Probe", key: key, from: lowest)
            let plan = try Self.plan(connection, probe)
            #expect(!plan.contains { $0.contains("Seq Scan") }, "\(plan)")
            #expect(plan.contains { $0.contains("Index Scan") || $0.contains("Index Only Scan") }, "\(plan)")
            // And it answers the question: is a stored identifier at or above the lowest new one?
            let parameters = try probe.binds.map(BindEncoding.postgresValue)
            let found = try connection.query(probe.text, parameters).rowCount > 0
            #expect(found == (lowest != .int64(200_000)))
        }
    }
}
