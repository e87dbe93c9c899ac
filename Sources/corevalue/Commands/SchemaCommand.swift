import CoreValuePostgres

/// `corevalue schema [--model PATH] [--schema S] [--history]`: prints a model's DDL (the example model's by default).
enum SchemaCommand: Command {
    static let name = "schema"
    static let summary = "print the DDL of a model (a first migration)"
    static let usage = """
        usage: corevalue schema [--model PATH [--version V]] [--schema S] [--history]

        Prints the CREATE TABLE statements of the model (the example model without --model). Without
        --schema the names are unqualified, as in migrations/0001_example_model.sql. With --history, also
        the tables of a store that records history (recordsHistory).

        \(ModelOption.usage)
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(ModelOption.names.union(["schema", "history"]))
        let model = try ModelOption.model(arguments)
        try SchemaMapping(model: model).validate()
        let history = arguments.flags.contains("history")
        print(
            SchemaPrinter(model: model, schema: arguments.value("schema"), recordsHistory: history).ddl, terminator: "")
    }
}
