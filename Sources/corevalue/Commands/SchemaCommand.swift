import CoreValuePostgres

/// `corevalue schema [--model PATH] [--schema S]`: prints a model's DDL (the example model's by default).
enum SchemaCommand: Command {
    static let name = "schema"
    static let summary = "print the DDL of a model (a first migration)"
    static let usage = """
        usage: corevalue schema [--model PATH [--version V]] [--schema S]

        Prints the CREATE TABLE statements of the model (the example model without --model). Without
        --schema the names are unqualified, as in migrations/0001_example_model.sql.

        \(ModelOption.usage)
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(ModelOption.names.union(["schema"]))
        let model = try ModelOption.model(arguments)
        try SchemaMapping(model: model).validate()
        print(SchemaPrinter(model: model, schema: arguments.value("schema")).ddl, terminator: "")
    }
}
