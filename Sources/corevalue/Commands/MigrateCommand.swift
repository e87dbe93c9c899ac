import CoreValuePostgres
import Foundation

/// `corevalue migrate [--url URL] [--schema S] [--migrations DIR]`: applies pending migrations.
enum MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply pending migrations to a database"
    static let usage = """
        usage: corevalue migrate [--url URL] [--schema S] [--migrations DIR]

        Applies the pending NNNN_name.sql files of DIR (default ./migrations) in order, each in its own
        transaction under a transaction-scoped advisory lock: several processes may run this at once, also
        behind pgbouncer in transaction mode. With --schema the tables go into that schema (created if
        missing). An applied file that was edited is an error, and so is a pending file older than an
        applied one.

        Without --url the DATABASE_URL environment variable is used (a URL given as an argument, with its
        password, shows in `ps`).
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(["url", "schema", "migrations"])
        let migrator = try Migrator(url: try arguments.databaseURL(), schema: arguments.value("schema"))
        let migrations = try Migration.load(from: MigrationsDirectory.url(arguments))
        let applied = try migrator.migrate(migrations)
        if applied.isEmpty {
            print(
                "Nothing to migrate: \(migrations.count) migration\(migrations.count == 1 ? "" : "s") already applied.")
        }
        for migration in applied { print("Applied \(migration.fileName)") }
    }
}

/// The `--migrations` option.
enum MigrationsDirectory {
    static func url(_ arguments: ParsedArguments) -> URL {
        URL(fileURLWithPath: arguments.value("migrations") ?? "migrations", isDirectory: true)
    }
}
