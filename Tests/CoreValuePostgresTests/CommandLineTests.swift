@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// The `corevalue` executable, run as real OS processes.
@Suite struct CommandLineTests {
    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    /// The built `corevalue` binary: next to the test bundle, or in .build/debug of the repository.
    static func binary() throws -> URL { try binary(named: "corevalue") }

    /// A built executable of this package: next to the test bundle, or in .build/debug of the repository.
    static func binary(named name: String) throws -> URL {
        var candidates: [URL] = []
        if let first = CommandLine.arguments.first {
            let runner = URL(fileURLWithPath: first)
            candidates += [
                runner.deletingLastPathComponent(), runner.deletingLastPathComponent().deletingLastPathComponent(),
            ]
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        candidates.append(TestDatabase.repositoryRoot.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw PostgresStoreError(.invalidConfiguration, "\(name) binary not found; run swift build first")
    }

    /// Starts the tool with the test's environment, without `DATABASE_URL` unless `databaseURL` is given.
    static func start(_ arguments: [String], databaseURL: String? = nil) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = databaseURL
        process.environment = environment
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return (process, output, error)
    }

    static func finish(_ started: (Process, Pipe, Pipe)) -> Run {
        let (process, output, error) = started
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }

    static func run(_ arguments: [String], databaseURL: String? = nil) throws -> Run {
        finish(try start(arguments, databaseURL: databaseURL))
    }

    @Test func schemaPrintsTheModelsDDL() throws {
        let run = try Self.run(["schema"])
        #expect(run.status == 0)
        // The migration files hold the same DDL (SchemaDDLTests.theMigrationFilesAreTheExampleModelsDDL).
        #expect(run.output == SchemaPrinter(model: try ExampleModel.make()).ddl)
    }

    @Test func usageErrorsExitNonZeroWithAMessage() throws {
        let help = try Self.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("migrate") && help.output.contains("status") && help.output.contains("schema"))
        let unknown = try Self.run(["frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown command 'frobnicate'"))
        let missing = try Self.run(["migrate"])
        #expect(missing.status == 2)
        #expect(missing.error.contains("missing --url"))
        let badOption = try Self.run(["status", "--url", "postgresql://x", "--colour"])
        #expect(badOption.status == 2)
        #expect(badOption.error.contains("unknown option --colour"))
        let unreachable = try Self.run([
            "status", "--url", "postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=2",
        ])
        #expect(unreachable.status == 1)
        #expect(!unreachable.error.isEmpty)
        #expect(!unreachable.error.contains("secret"))
    }

    @Test func theURLCanComeFromTheEnvironmentInsteadOfTheCommandLine() throws {
        try TestDatabase.withSchema { url, schema in
            let arguments = ["--schema", schema, "--migrations", TestDatabase.migrationsDirectory.path]
            let migrate = try Self.run(["migrate"] + arguments, databaseURL: url)
            #expect(migrate.status == 0, "\(migrate.error)")
            #expect(migrate.output.contains("Applied 0001_example_model.sql"))
            let status = try Self.run(["status"] + arguments, databaseURL: url)
            #expect(status.output == "applied     0001_example_model\napplied     0002_commit_table\n")
            #expect(try Self.run(["migrate", "--help"]).output.contains("DATABASE_URL"))
            #expect(try Self.run(["status", "--help"]).output.contains("DATABASE_URL"))
        }
    }

    @Test func fourProcessesMigrateAtOnceAndEachFileIsAppliedOnce() throws {
        try TestDatabase.withSchema { url, schema in
            let arguments = [
                "migrate", "--url", url, "--schema", schema, "--migrations", TestDatabase.migrationsDirectory.path,
            ]
            let started = try (0..<4).map { _ in try Self.start(arguments) }
            let runs = started.map(Self.finish)
            #expect(runs.map(\.status) == [0, 0, 0, 0], "\(runs.map(\.error))")
            // Each file by one process (a file per transaction: one process may take the first, another the
            // second); the others find nothing left.
            for file in ["0001_example_model.sql", "0002_commit_table.sql"] {
                #expect(runs.filter { $0.output.contains("Applied \(file)") }.count == 1)
            }
            let applying = runs.filter { $0.output.contains("Applied") }.count
            #expect(runs.filter { $0.output.contains("Nothing to migrate") }.count == 4 - applying)

            let status = try Self.run([
                "status", "--url", url, "--schema", schema, "--migrations", TestDatabase.migrationsDirectory.path,
            ])
            #expect(status.status == 0)
            #expect(status.output == "applied     0001_example_model\napplied     0002_commit_table\n")
            let connection = try Connection(url)
            defer { connection.close() }
            let count = try connection.query(
                "SELECT count(*) FROM \(SQLIdentifier(Migrator.historyTable, schema: schema).quoted)")
            #expect(try count.decode(Int64.self, row: 0, column: 0) == 2)
        }
    }
}
