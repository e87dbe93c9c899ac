import CLibPQ

/// A libpq connection string, checked by libpq's own parser (`PQconninfoParse`).
///
/// Accepts a URL (`postgresql://user@host1:5432,host2:5432/db?target_session_attrs=read-write`) or
/// key=value pairs (`host=localhost dbname=app connect_timeout=5`). The string is passed to libpq unchanged
/// when connecting, so multi-host lists, `target_session_attrs`, `connect_timeout`, `sslmode` and the
/// `PG*` environment variables behave exactly as libpq documents.
///
/// Secrets never leave the value: ``options`` shows `password` and `sslpassword` as `********`, and
/// ``description``, `String(reflecting:)`, `dump` and test failure messages show the redacted options only.
public struct ConnectionConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Keywords whose values are secrets and never printed.
    private static let secretKeywords: Set<String> = ["password", "sslpassword"]
    /// What a secret value is shown as.
    private static let redacted = "********"

    /// The keywords given in the string and their values, after libpq's parsing (URL parts become keywords);
    /// secrets (`password`, `sslpassword`) are present with the value `********`.
    public let options: [String: String]
    /// The original string, password included, used for connecting; not API (other targets of this package
    /// may connect with it).
    package let conninfo: String

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
                let key = String(cString: keyword)
                options[key] = Self.secretKeywords.contains(key) ? Self.redacted : String(cString: value)
            }
            option += 1
        }
        self.options = options
        self.conninfo = conninfo
    }

    /// The options as `key=value` pairs in key order, with secrets shown as `********`.
    public var description: String {
        options.keys.sorted().map { key in "\(key)=\(options[key] ?? "")" }.joined(separator: " ")
    }

    /// `ConnectionConfiguration(<description>)`: the redacted options, never the password.
    public var debugDescription: String { "ConnectionConfiguration(\(description))" }

    /// The redacted options only, so `dump` and reflection-based printing cannot show the password.
    public var customMirror: Mirror {
        Mirror(self, children: ["options": description], displayStyle: .struct)
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
