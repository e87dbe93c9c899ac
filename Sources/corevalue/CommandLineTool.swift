import Foundation

/// A subcommand of `corevalue`.
protocol Command {
    /// The word that selects the command (`migrate`).
    static var name: String { get }
    /// One line for the overview.
    static var summary: String { get }
    /// The command's usage text.
    static var usage: String { get }
    /// Runs the command with the arguments after its name.
    ///
    /// - Throws: Any error, reported on stderr with exit status 1; ``UsageError`` exits with status 2.
    static func run(_ arguments: ParsedArguments) throws
}

/// Dispatches `corevalue <command> [options]` to a command and turns errors into exit codes.
enum CommandLineTool {
    /// Every command, in the order the help lists them.
    static var commands: [any Command.Type] {
        [
            SchemaCommand.self, DiffCommand.self, GrantCommand.self, MigrateCommand.self, StatusCommand.self,
            DemoCommand.self,
        ]
    }

    /// Runs the tool and returns the process exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first, first != "--help", first != "-h", first != "help" else {
            print(overview)
            return 0
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            printError("unknown command '\(first)'\n\n\(overview)")
            return 2
        }
        do {
            let parsed = try ParsedArguments(Array(arguments.dropFirst()))
            if parsed.flags.contains("help") {
                print(command.usage)
                return 0
            }
            try command.run(parsed)
            return 0
        } catch let error as UsageError {
            printError("\(error.message)\n\n\(command.usage)")
            return 2
        } catch {
            printError(String(describing: error))
            return 1
        }
    }

    static var overview: String {
        var text = "usage: corevalue <command> [options]\n\ncommands:\n"
        for command in commands {
            text += "  " + command.name.padding(toLength: 10, withPad: " ", startingAt: 0) + command.summary + "\n"
        }
        text += "\nRun `corevalue <command> --help` for a command's options."
        return text
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data(("corevalue: " + message + "\n").utf8))
    }
}
