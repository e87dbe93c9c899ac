/// `corevalue status`: applies pending migrations.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "list applied and pending migrations"
    static let usage = "usage: corevalue status --url URL [--schema S] [--migrations DIR]"
    static func run(_ arguments: ParsedArguments) throws { throw UsageError(message: "not yet available") }
}
