import CLibPQ

extension DatabaseError {
    /// The diagnostic field codes read from a failed result (libpq's `PG_DIAG_*` characters).
    private static let fieldCodes: [Character] = [
        "S", "V", "C", "M", "D", "H", "P", "p", "q", "W", "s", "t", "c", "d", "n", "F", "L", "R",
    ]

    /// Reads every diagnostic field of a failed result; `nil` when the result carries no SQLSTATE
    /// (libpq's own errors, such as a lost connection, have none).
    init?(result: OpaquePointer, sql: String?) {
        var fields: [Character: String] = [:]
        for code in Self.fieldCodes {
            guard let ascii = code.asciiValue, let value = PQresultErrorField(result, Int32(ascii)) else { continue }
            fields[code] = String(cString: value)
        }
        guard fields["C"] != nil else { return nil }
        self.init(fields: fields, sql: sql)
    }
}
