import CoreValueExamples
import CoreValuePostgres

/// `corevalue schema [--schema S]`: prints the example model's DDL.
enum SchemaCommand: Command {
    static let name = "schema"
    static let summary = "print the DDL of the example model (a first migration)"
    static let usage = """
        usage: corevalue schema [--schema S]

        Prints the CREATE TABLE statements of the example model. Without --schema the names are
        unqualified, as in migrations/0001_example_model.sql.
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(["schema"])
        let model = try ExampleModel.make()
        try SchemaMapping(model: model).validate()
        print(SchemaPrinter(model: model, schema: arguments.value("schema")).ddl, terminator: "")
    }
}
