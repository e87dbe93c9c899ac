import CLibPQ

/// A libpq connection string, checked by libpq's own parser (`PQconninfoParse`).
///
/// Accepts a URL (`postgresql://user@host1:5432,host2:5432/db?target_session_attrs=read-write`) or
/// key=value pairs (`host=localhost dbname=app connect_timeout=5`). The string is passed to libpq unchanged
/// when connecting, so multi-host lists, `target_session_attrs`, `connect_timeout`, `sslmode` and the
/// `PG*` environment variables behave exactly as libpq documents. ``description`` never shows the password.
public struct ConnectionConfiguration: Sendable, CustomStringConvertible {
    /// Keywords whose values are secrets and never printed.
    private static let secretKeywords: Set<String> = ["password", "sslpassword"]

    /// The keywords given in the string and their values, after libpq's parsing (URL parts become keywords).
    public let options: [String: String]
    /// The original string, used for connecting.
    public let conninfo: String

    /// Parses a connection string.
    ///
    /// - Throws: ``LibPQError`` `.invalidConnectionString` with libpq's explanation, e.g.
    ///   `missing "=" after "port" in connection info string`.
    public init(_ conninfo: String) throws {
        guard !conninfo.utf8.contains(0) else {
            // libpq would read only the text before the NUL and connect somewhere the caller did not name.
            throw LibPQError(.invalidConnectionString, "invalid connection string: it contains a NUL character")
        }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(conninfo, &errorMessage) else {
            let reason = errorMessage.map { String(cString: $0) } ?? "out of memory"
            if let errorMessage { PQfreemem(errorMessage) }
            throw LibPQError(
                .invalidConnectionString,
                "invalid connection string: \(reason.trimmingTrailingNewlines())")
        }
        defer { PQconninfoFree(parsed) }
        var options: [String: String] = [:]
        var option = parsed
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                options[String(cString: keyword)] = String(cString: value)
            }
            option += 1
        }
        self.options = options
        self.conninfo = conninfo
    }

    /// The options as `key=value` pairs in key order, with secrets shown as `********`.
    public var description: String {
        options.keys.sorted().map { key in
            let value = Self.secretKeywords.contains(key) ? "********" : options[key] ?? ""
            return "\(key)=\(value)"
        }.joined(separator: " ")
    }
}

extension String {
    /// The string without the trailing newlines libpq puts on its messages.
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline { text.removeLast() }
        return String(text)
    }
}
