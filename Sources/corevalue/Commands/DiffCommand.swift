import CoreValuePostgres

/// `corevalue diff [--model PATH] [--url URL] [--schema S]`: prints the migration that brings a database's
/// schema to a model; `corevalue diff --model PATH --from V1 --to V2`: the one between two versions of a
/// bundle, without a database.
enum DiffCommand: Command {
    static let name = "diff"
    static let summary = "print the migration that brings the database to a model"
    static let usage = """
        usage: corevalue diff [--model PATH [--version V]] [--url URL] [--schema S] [--history]
               corevalue diff --model PATH --from V1 --to V2 [--schema S]

        Compares the database's schema with the model and prints the next migration file: the statements
        that bring it to the model, then the destructive steps (dropping a column, a narrowing type change)
        as comments to review. Prints nothing when they match. Changes nothing. With --history, for a store
        that records history: its history tables too.

        With --from and --to, compares two versions of a .xcdatamodeld bundle instead, with no database:
        the migration that takes a database made for V1 to V2 (the same as diff against such a database).

        \(ModelOption.usage)
        Without --url the DATABASE_URL environment variable is used.
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(ModelOption.names.union(["url", "schema", "from", "to", "history"]))
        if arguments.value("from") != nil || arguments.value("to") != nil {
            let old = try ModelOption.model(arguments, version: try arguments.required("from"))
            let new = try ModelOption.model(arguments, version: try arguments.required("to"))
            let diff = try SchemaDiff.between(old, new, schema: arguments.value("schema"))
            if !diff.isEmpty { print(diff.migrationText, terminator: "") }
            return
        }
        let model = try ModelOption.model(arguments)
        let migrator = try Migrator(url: try arguments.databaseURL(), schema: arguments.value("schema"))
        let diff = try migrator.diff(model: model, recordsHistory: arguments.flags.contains("history"))
        if !diff.isEmpty { print(diff.migrationText, terminator: "") }
    }
}
