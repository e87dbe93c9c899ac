import CoreValue
import LibPQ

/// Compares a database's tables with a model's mapping and reports every difference at once.
struct SchemaVerifier {
    let mapping: SchemaMapping
    let schema: String?

    /// The statement that lists the columns of the schema (the search path's first schema when `nil`).
    var columnsQuery: SQL {
        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text "
            + "FROM information_schema.columns WHERE table_schema = coalesce(\(typedBind: .scalar(.string, schema.map(AttributeValue.string) ?? .null)), current_schema()) "
            + "ORDER BY table_name, ordinal_position"
    }

    /// Every difference between the expected tables and the columns found (`table -> column -> (type, nullable)`).
    func mismatches(found: [String: [String: (type: String, isNullable: Bool)]]) -> [String] {
        var problems: [String] = []
        for table in mapping.tables {
            guard let columns = found[table.name] else {
                problems.append("table \(SQLIdentifier(table.name)) is missing")
                continue
            }
            for column in table.columns {
                let name = "\(SQLIdentifier(table.name)).\(SQLIdentifier(column.name))"
                guard let actual = columns[column.name] else {
                    problems.append("column \(name) is missing (expected \(column.sqlType))")
                    continue
                }
                let expected = ColumnType.informationSchemaName(of: column.sqlType)
                if actual.type != expected {
                    problems.append("column \(name) has type \(actual.type), expected \(expected)")
                }
                if actual.isNullable != column.isNullable {
                    problems.append(
                        "column \(name) is \(actual.isNullable ? "nullable" : "NOT NULL"), expected \(column.isNullable ? "nullable" : "NOT NULL")"
                    )
                }
            }
        }
        return problems
    }

    /// Reads the schema's columns and throws when anything differs.
    ///
    /// - Throws: ``PostgresStoreError/Code/schemaMismatch`` listing every difference; server errors.
    func verify(on connection: Connection) throws {
        let query = columnsQuery
        let result = try connection.query(query.text, try query.binds.map(BindEncoding.postgresValue))
        var found: [String: [String: (type: String, isNullable: Bool)]] = [:]
        for row in 0..<result.rowCount {
            let table = try result.decode(String.self, row: row, column: 0)
            let column = try result.decode(String.self, row: row, column: 1)
            let type = try result.decode(String.self, row: row, column: 2)
            let nullable = try result.decode(String.self, row: row, column: 3) == "YES"
            found[table, default: [:]][column] = (type, nullable)
        }
        let problems = mismatches(found: found)
        guard problems.isEmpty else {
            throw PostgresStoreError(
                .schemaMismatch,
                "the database\(schema.map { " schema \(SQLIdentifier($0))" } ?? "") does not match the model "
                    + "(\(problems.count) difference\(problems.count == 1 ? "" : "s")); run the migrations",
                mismatches: problems)
        }
    }
}
