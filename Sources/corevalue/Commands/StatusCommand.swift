import CoreValuePostgres

/// `corevalue status [--url URL] [--schema S] [--migrations DIR] [--model PATH]`: lists applied and pending
/// migrations, and with a model whether the schema matches it.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "list applied and pending migrations"
    static let usage = """
        usage: corevalue status [--url URL] [--schema S] [--migrations DIR] [--model PATH [--version V]]

        Prints one line per migration: applied, pending, changed (applied, then edited) or missing-file.
        Exits with status 1 when a file changed. With --model, then checks the schema against the model:
        `model       matches`, or `model       differs` and the steps `corevalue diff` would print
        (exit status 1).

        \(ModelOption.usage)

        Without --url the DATABASE_URL environment variable is used (a URL given as an argument, with
        its password, shows in `ps`).
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(ModelOption.names.union(["url", "schema", "migrations"]))
        let migrator = try Migrator(url: try arguments.databaseURL(), schema: arguments.value("schema"))
        let statuses = try migrator.status(try Migration.load(from: MigrationsDirectory.url(arguments)))
        for status in statuses {
            let version = String(status.version)
            let padded = String(repeating: "0", count: max(0, 4 - version.count)) + version
            print("\(status.state.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))\(padded)_\(status.name)")
        }
        if statuses.contains(where: { $0.state == .changed }) {
            throw PostgresStoreError(.migrationChanged, "an applied migration file was edited")
        }
        guard arguments.value("model") != nil else { return }
        let diff = try migrator.diff(model: try ModelOption.model(arguments))
        guard !diff.isEmpty else {
            print("model       matches")
            return
        }
        print("model       differs")
        for step in diff.statements + diff.destructive { print("  " + step.replacingOccurrences(of: "\n", with: " ")) }
        throw PostgresStoreError(
            .schemaMismatch, "the schema differs from the model (corevalue diff prints the migration)")
    }
}
