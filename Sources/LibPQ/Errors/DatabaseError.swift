/// An error reported by the PostgreSQL server, with every diagnostic field it sent.
///
/// `description` names the severity, SQLSTATE, message, hint, constraint, schema, table, column and the
/// failing SQL text. It leaves out ``detail`` (PostgreSQL puts row values there, e.g.
/// `Key (email)=(…) already exists.`) and never contains bound parameter values; read ``detail`` directly
/// when you need it.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE code (`PG_DIAG_SQLSTATE`).
    public var sqlState: SQLState
    /// The severity, possibly localized: ERROR, FATAL, PANIC, ... (`PG_DIAG_SEVERITY`).
    public var severity: String
    /// The severity, never localized (`PG_DIAG_SEVERITY_NONLOCALIZED`).
    public var nonLocalizedSeverity: String?
    /// The primary message (`PG_DIAG_MESSAGE_PRIMARY`).
    public var message: String
    /// The optional secondary message; may contain row values (`PG_DIAG_MESSAGE_DETAIL`).
    public var detail: String?
    /// A suggestion what to do (`PG_DIAG_MESSAGE_HINT`).
    public var hint: String?
    /// A 1-based character index into ``sql`` where the error was found (`PG_DIAG_STATEMENT_POSITION`).
    public var position: Int?
    /// Like ``position`` but into ``internalQuery`` (`PG_DIAG_INTERNAL_POSITION`).
    public var internalPosition: Int?
    /// An internally generated command that failed (`PG_DIAG_INTERNAL_QUERY`).
    public var internalQuery: String?
    /// The call stack context, e.g. PL/pgSQL lines (`PG_DIAG_CONTEXT`).
    public var context: String?
    /// The schema of the object involved (`PG_DIAG_SCHEMA_NAME`).
    public var schemaName: String?
    /// The table involved (`PG_DIAG_TABLE_NAME`).
    public var tableName: String?
    /// The column involved (`PG_DIAG_COLUMN_NAME`).
    public var columnName: String?
    /// The data type involved (`PG_DIAG_DATATYPE_NAME`).
    public var dataTypeName: String?
    /// The constraint involved (`PG_DIAG_CONSTRAINT_NAME`).
    public var constraintName: String?
    /// The server source file that reported the error (`PG_DIAG_SOURCE_FILE`).
    public var sourceFile: String?
    /// The line in ``sourceFile`` (`PG_DIAG_SOURCE_LINE`).
    public var sourceLine: Int?
    /// The server function that reported the error (`PG_DIAG_SOURCE_FUNCTION`).
    public var sourceFunction: String?
    /// The statement that failed (its text only, never its bound values).
    public var sql: String?

    /// Creates an error from diagnostic fields keyed by their `PG_DIAG_*` code character.
    ///
    /// The keys are libpq's field codes: `"C"` SQLSTATE, `"S"` severity, `"V"` non-localized severity,
    /// `"M"` message, `"D"` detail, `"H"` hint, `"P"` position, `"p"` internal position, `"q"` internal
    /// query, `"W"` context, `"s"` schema, `"t"` table, `"c"` column, `"d"` data type, `"n"` constraint,
    /// `"F"` file, `"L"` line, `"R"` routine. Missing SQLSTATE becomes `XX000`, missing severity `ERROR`.
    public init(fields: [Character: String], sql: String? = nil) {
        sqlState = SQLState(rawValue: fields["C"] ?? "XX000")
        severity = fields["S"] ?? fields["V"] ?? "ERROR"
        nonLocalizedSeverity = fields["V"]
        message = fields["M"] ?? "unknown server error"
        detail = fields["D"]
        hint = fields["H"]
        position = fields["P"].flatMap { Int($0) }
        internalPosition = fields["p"].flatMap { Int($0) }
        internalQuery = fields["q"]
        context = fields["W"]
        schemaName = fields["s"]
        tableName = fields["t"]
        columnName = fields["c"]
        dataTypeName = fields["d"]
        constraintName = fields["n"]
        sourceFile = fields["F"]
        sourceLine = fields["L"].flatMap { Int($0) }
        sourceFunction = fields["R"]
        self.sql = sql
    }

    /// Whether the server could not run a statement prepared earlier on the session as prepared: its plan's
    /// result type changed after a schema change (0A000 from `RevalidateCachedQuery`), or the session does not
    /// know its name (26000). The statement did nothing; run again, it is prepared afresh (see
    /// ``Connection/statementCacheCapacity``).
    public var isStalePreparedStatement: Bool {
        sqlState == .invalidSQLStatementName
            || (sqlState == .featureNotSupported && sourceFunction == "RevalidateCachedQuery")
    }

    /// `"<severity> <sqlState>: message (hint: …, constraint: …, table: …, column: …) in: <sql>"`.
    public var description: String {
        var parts: [String] = []
        if let hint { parts.append("hint: \(hint)") }
        if let constraintName { parts.append("constraint: \(constraintName)") }
        if let schemaName { parts.append("schema: \(schemaName)") }
        if let tableName { parts.append("table: \(tableName)") }
        if let columnName { parts.append("column: \(columnName)") }
        if let dataTypeName { parts.append("type: \(dataTypeName)") }
        var text = "\(severity) \(sqlState): \(message)"
        if !parts.isEmpty { text += " (\(parts.joined(separator: ", ")))" }
        if let sql { text += " in: \(sql)" }
        return text
    }
}
