import Foundation

/// A command-line mistake: unknown option, missing value. Exits with status 2 and the command's usage.
struct UsageError: Error {
    var message: String
}

/// Options of the form `--name value` or `--name=value`, and flags of the form `--name`.
struct ParsedArguments {
    /// Options with values.
    private(set) var options: [String: String] = [:]
    /// Flags without values.
    private(set) var flags: Set<String> = []

    /// Options that take a value; everything else starting with `--` is a flag.
    static let valued: Set<String> = ["url", "schema", "migrations", "count", "model", "version", "from", "to", "role"]

    /// Parses the arguments after the command name.
    ///
    /// - Throws: ``UsageError`` for a positional argument or an option without a value.
    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else {
                if argument == "-h" {
                    flags.insert("help")
                    index += 1
                    continue
                }
                throw UsageError(message: "unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            if let equals = name.firstIndex(of: "=") {
                options[String(name[..<equals])] = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            } else if Self.valued.contains(name) {
                guard index + 1 < arguments.count else { throw UsageError(message: "option --\(name) needs a value") }
                options[name] = arguments[index + 1]
                index += 1
            } else {
                flags.insert(name)
            }
            index += 1
        }
    }

    /// The value of an option, or `nil`.
    func value(_ name: String) -> String? { options[name] }

    /// The value of a required option.
    ///
    /// - Throws: ``UsageError`` when it is missing.
    func required(_ name: String) throws -> String {
        guard let value = options[name], !value.isEmpty else { throw UsageError(message: "missing --\(name)") }
        return value
    }

    /// The database URL: `--url`, else the `DATABASE_URL` environment variable (which, unlike an argument,
    /// does not show in `ps`).
    ///
    /// - Throws: ``UsageError`` when neither is set.
    func databaseURL(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let value = options["url"], !value.isEmpty { return value }
        if let value = environment["DATABASE_URL"], !value.isEmpty { return value }
        throw UsageError(message: "missing --url (or set DATABASE_URL)")
    }

    /// Throws for options the command does not know.
    func checkKnown(_ known: Set<String>) throws {
        for name in Set(options.keys).union(flags) where !known.contains(name) && name != "help" {
            throw UsageError(message: "unknown option --\(name)")
        }
    }
}
