import CoreValue
import CoreValuePostgres
import Foundation
import Testing

/// The tool on a user's own model (issue 31, point 3): `schema`, `diff` and `status` with `--model` read a Core
/// Data model as Xcode writes it.
@Suite struct CommandLineModelTests {
    static let contents = #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Note" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <attribute name="body" optional="YES" attributeType="String"/>
                <attribute name="draft" optional="YES" transient="YES" attributeType="String"/>
            </entity>
        </model>
        """#

    /// Writes the model to a temporary `.xcdatamodel` folder and runs `body` with its path.
    static func withModel(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "Notes-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        try body(folder.path)
    }

    @Test func schemaPrintsTheDDLOfAnXcodeModelAndItsWarnings() throws {
        try Self.withModel { path in
            let run = try CommandLineTests.run(["schema", "--model", path])
            #expect(run.status == 0, "\(run.error)")
            #expect(run.output.contains(#"CREATE TABLE "Note""#))
            #expect(run.output.contains(#""title" text"#) && !run.output.contains("draft"))
            #expect(run.error.contains("warning: Note.draft"))
            let missing = try CommandLineTests.run(["schema", "--model", path + "-missing"])
            #expect(missing.status == 1 && missing.error.contains("no such file"))
            #expect(try CommandLineTests.run(["schema", "--version", "2"]).status == 2)
        }
    }

    /// Two versions of a bundle, compared without a database.
    @Test func diffBetweenTwoVersionsNeedsNoDatabase() throws {
        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent(
            "Notes-\(UUID().uuidString).xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: bundle) }
        let second = Self.contents.replacingOccurrences(
            of: #"<attribute name="body""#,
            with: #"<attribute name="pinned" attributeType="Boolean" defaultValueString="NO"/><attribute name="body""#)
        for (version, contents) in [("V1", Self.contents), ("V2", second)] {
            let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        let run = try CommandLineTests.run(["diff", "--model", bundle.path, "--from", "V1", "--to", "V2"])
        #expect(run.status == 0, "\(run.error)")
        #expect(
            run.output.contains(#"ALTER TABLE "Note" ADD COLUMN "pinned" boolean NOT NULL DEFAULT FALSE;"#),
            "\(run.output)")
        #expect(
            try CommandLineTests.run(["diff", "--model", bundle.path, "--from", "V2", "--to", "V2"]).output.isEmpty)
        #expect(try CommandLineTests.run(["diff", "--model", bundle.path, "--from", "V1"]).status == 2)
    }

    @Test func diffAndStatusCompareTheDatabaseWithAnXcodeModel() throws {
        try TestDatabase.withSchema { url, schema in
            try Self.withModel { path in
                let empty = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: empty) }
                let common = ["--model", path, "--schema", schema]
                let diff = try CommandLineTests.run(["diff"] + common, databaseURL: url)
                #expect(diff.status == 0, "\(diff.error)")
                #expect(diff.output.contains(#"CREATE TABLE "\#(schema)"."Note""#), "\(diff.output)")
                let before = try CommandLineTests.run(
                    ["status"] + common + ["--migrations", empty.path], databaseURL: url)
                #expect(before.status == 1 && before.output.contains("model       differs"), "\(before)")
                // Applied (here by the migrator from the same file), the schema matches.
                let model = try ManagedObjectModel([
                    Entity(
                        "Note", attributes: [Attribute("title", .string), Attribute("body", .string, optional: true)])
                ])
                try Migrator(url: url, schema: schema).migrate(model: model)
                let after = try CommandLineTests.run(
                    ["status"] + common + ["--migrations", empty.path], databaseURL: url)
                #expect(after.status == 0 && after.output.contains("model       matches"), "\(after)")
                #expect(try CommandLineTests.run(["diff"] + common, databaseURL: url).output.isEmpty)
            }
        }
    }
}
