import CoreValuePostgres

/// `corevalue grant --role R [--read-only] [--model PATH] [--schema S]`: prints the `GRANT`s a role needs to use
/// a model's tables.
enum GrantCommand: Command {
    static let name = "grant"
    static let summary = "print the GRANTs an application or read-only role needs"
    static let usage = """
        usage: corevalue grant --role R [--read-only] [--model PATH [--version V]] [--schema S] [--history]

        Prints the GRANT statements that let role R use the model's tables and nothing else: USAGE on the
        schema, SELECT, INSERT, UPDATE and DELETE on each table, USAGE on the schema's sequences; with
        --read-only, USAGE on the schema and SELECT. With --history, the history tables too (a reader of
        history needs only SELECT; a writer INSERT; pruning DELETE and UPDATE). Run them as the schema's owner
        (the role that migrates). Connects to nothing.

        \\(ModelOption.usage)
        """

    static func run(_ arguments: ParsedArguments) throws {
        try arguments.checkKnown(ModelOption.names.union(["role", "read-only", "schema", "history"]))
        let role = try arguments.required("role")
        let model = try ModelOption.model(arguments)
        let printer = SchemaPrinter(
            model: model, schema: arguments.value("schema"), recordsHistory: arguments.flags.contains("history"))
        print(printer.grants(to: role, readOnly: arguments.flags.contains("read-only")), terminator: "")
    }
}
