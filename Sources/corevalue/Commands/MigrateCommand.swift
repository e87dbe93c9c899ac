/// `corevalue migrate`: applies pending migrations.
enum MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply pending migrations"
    static let usage = "usage: corevalue migrate --url URL [--schema S] [--migrations DIR]"
    static func run(_ arguments: ParsedArguments) throws { throw UsageError(message: "not yet available") }
}
