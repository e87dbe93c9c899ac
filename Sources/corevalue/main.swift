import Foundation

// corevalue: the command-line tool. One file per command in Commands/; this file only dispatches.
let arguments = Array(CommandLine.arguments.dropFirst())
let status = CommandLineTool.run(arguments)
exit(status)
