import Foundation
import Synchronization
import Testing

@testable import CoreValueTesting

/// `Subprocess`, which starts the programs a test server needs: what a started program inherits, and a program
/// that cannot be run yet because it is open for writing (`ETXTBSY`, "Text file busy").
@Suite struct SubprocessTests {
    /// A directory of its own with a script in it that prints `text`, written by Foundation (whose descriptor
    /// has no O_CLOEXEC, as a user's test would write it).
    static func script(printing text: String) throws -> (directory: URL, path: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("corevalue-subprocess-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("program").path
        try "#!/bin/sh\necho \(text)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return (directory, path)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func aStartedProgramInheritsNoDescriptorButItsOutput() throws {
        let (directory, _) = try Self.script(printing: "unused")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Opened as Foundation opens files: without O_CLOEXEC.
        let held = open(directory.appendingPathComponent("held").path, O_WRONLY | O_CREAT, 0o600)
        try #require(held >= 0)
        defer { close(held) }
        let descriptors = try Subprocess.output(of: "/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(descriptors.split(whereSeparator: \.isWhitespace) == ["0", "1", "2"])
    }

    @Test func aProgramOpenForWritingIsStartedOnceItIsClosed() throws {
        let (directory, path) = try Self.script(printing: "started")
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = open(path, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.05)
            close(writer)
        }
        #expect(try Subprocess.output(of: path, []) == "started")
    }

    @Test func aProgramThatStaysOpenForWritingIsRefusedSayingWhy() throws {
        let (directory, path) = try Self.script(printing: "never")
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = open(path, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        let error = #expect(throws: TestServerError.self) { try Subprocess.output(of: path, []) }
        #expect(error?.description == "could not start \(path): Text file busy (errno \(ETXTBSY))")
    }

    /// How `DockerServerTests` once failed in CI: a script written on one thread was inherited, open for
    /// writing, by a program started on another (a watchdog, which lives as long as the test), and could not
    /// be run. Here four threads each write scripts and run them while starting a long-lived program.
    @Test func scriptsWrittenAndRunOnSeveralThreadsAtOnceAllRun() throws {
        let (directory, _) = try Self.script(printing: "unused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for run in 0..<25 {
                    let path = directory.appendingPathComponent("program-\(thread)-\(run)").path
                    do {
                        try "#!/bin/sh\necho \(thread)-\(run)\n".write(toFile: path, atomically: true, encoding: .utf8)
                        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
                        let sleeper = try Subprocess.spawn("/bin/sleep", ["1"], output: "/dev/null")
                        defer {
                            kill(sleeper, SIGKILL)
                            waitpid(sleeper, nil, 0)
                        }
                        let output = try Subprocess.output(of: path, [])
                        if output != "\(thread)-\(run)" { failures.withLock { $0.append("\(path): \(output)") } }
                    } catch {
                        failures.withLock { $0.append("\(path): \(error)") }
                    }
                }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
    }
}
