import Foundation
import Testing

@testable import CoreValueTesting

/// The Docker fallback of `TestSchema` (no `DATABASE_URL`, no PostgreSQL binaries), driven by a fake `docker`:
/// a shell script that records its arguments and answers as Docker would. No Docker engine runs on the
/// project's machines, so this is what is tested of that path: the arguments, the parsing of the output, and
/// that the container is removed when stopped, when it never becomes ready, and when its process dies.
@Suite struct DockerServerTests {
    /// A fake `docker` in a directory of its own, and the lines it recorded (one call each).
    struct FakeDocker {
        static let containerID = "4f2a9c0e1b7d" + String(repeating: "0", count: 52)
        let directory: URL
        var path: String { directory.appendingPathComponent("docker").path }
        var calls: [String] {
            let text = (try? String(contentsOf: directory.appendingPathComponent("calls"), encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        /// - Parameter info: The exit status of `docker info` (0: an engine answers).
        init(info: Int = 0, port: String = "127.0.0.1:49153") throws {
            directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("corevalue-fake-docker-\(UUID().uuidString.prefix(8))", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                echo "$*" >>'\(directory.path)/calls'
                case "$1" in
                    info) exit \(info) ;;
                    run) echo "Unable to find image 'postgres:15' locally" >&2; echo \(Self.containerID) ;;
                    port) echo '\(port)'; echo '[::1]:49153' ;;
                esac
                """
            // Written, then copied into place by `install`: only that process ever has the executable open for
            // writing. A descriptor of this process's (Foundation's has no O_CLOEXEC) could be copied by a
            // program another test starts meanwhile, and the fake could not be run while that one held it
            // ("Text file busy"): how these tests once failed in CI.
            let source = directory.appendingPathComponent("docker.sh")
            try script.write(to: source, atomically: false, encoding: .utf8)
            _ = try Subprocess.output(of: "install", ["-m", "755", source.path, path])
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// A stand-in for the test process, which the tests kill to see the watchdog at work.
    static func standIn() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["600"]
        try process.run()
        return process
    }

    /// Ends a stand-in (SIGKILL: it shares the test run's output, which must not stay open after the run).
    static func end(_ standIn: Process) {
        guard standIn.isRunning else { return }
        kill(standIn.processIdentifier, SIGKILL)
        standIn.waitUntilExit()
    }

    @Test func aContainerIsRunPolledUntilReadyAndRemovedWhenStoppedOrItsProcessDies() throws {
        let docker = try FakeDocker()
        defer { docker.remove() }
        let parent = try Self.standIn()
        defer { Self.end(parent) }
        var polls: [String] = []
        let server = try DockerServer.start(docker: docker.path, watching: parent.processIdentifier) { url in
            polls.append(url)
            return polls.count == 3
        }
        let id = FakeDocker.containerID
        #expect(server.container == id)
        #expect(server.url == "postgresql://corevalue@127.0.0.1:49153/postgres")
        #expect(polls == Array(repeating: server.url, count: 3), "polled until ready, then no more")
        #expect(
            docker.calls == [
                DockerServer.runArguments(parent: parent.processIdentifier).joined(separator: " "),
                "port \(id) 5432/tcp",
            ])
        #expect(docker.calls.first?.contains("-p 127.0.0.1::5432 postgres:15 -c fsync=off") == true)

        server.stop()
        server.stop()  // a second call does nothing
        #expect(docker.calls.suffix(1) == ["rm -f \(id)"])
        #expect(docker.calls.count == 3)

        // The watchdog removes the container once the process is gone (again, here: it was stopped).
        Self.end(parent)
        let deadline = ContinuousClock.now + .seconds(10)
        while docker.calls.count < 4, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(docker.calls.suffix(1) == ["rm -f \(id)"])
    }

    @Test func aContainerThatNeverAcceptsConnectionsIsRemovedWithATypedError() throws {
        let docker = try FakeDocker()
        defer { docker.remove() }
        let parent = try Self.standIn()
        defer { Self.end(parent) }
        let error = #expect(throws: TestServerError.self) {
            _ = try DockerServer.start(
                docker: docker.path, watching: parent.processIdentifier, timeout: .milliseconds(300)
            ) { _ in false }
        }
        // What was caught and what the fake recorded, so that a failure says which step went wrong.
        let caught = "caught: \(error.map(String.init(describing:)) ?? "nothing"); calls: \(docker.calls)"
        #expect(error?.description.contains("did not accept connections within") == true, "\(caught)")
        #expect(docker.calls.last == "rm -f \(FakeDocker.containerID)", "\(caught)")
    }

    @Test func aPortDockerDoesNotGiveIsATypedErrorAndTheContainerIsRemoved() throws {
        let docker = try FakeDocker(port: "no public port '5432/tcp' published")
        defer { docker.remove() }
        let parent = try Self.standIn()
        defer { Self.end(parent) }
        let error = #expect(throws: TestServerError.self) {
            _ = try DockerServer.start(docker: docker.path, watching: parent.processIdentifier) { _ in true }
        }
        let caught = "caught: \(error.map(String.init(describing:)) ?? "nothing"); calls: \(docker.calls)"
        #expect(error?.description.contains("docker port printed no host port") == true, "\(caught)")
        #expect(docker.calls.last == "rm -f \(FakeDocker.containerID)", "\(caught)")
    }

    @Test func theOutputOfDockerIsParsedOrRefused() throws {
        #expect(
            try DockerServer.containerID(in: "Pulling from library/postgres\nDone\nabc123def4567890")
                == "abc123def4567890")
        #expect(throws: TestServerError.self) { try DockerServer.containerID(in: "docker: permission denied.") }
        #expect(throws: TestServerError.self) { try DockerServer.containerID(in: "") }
        #expect(try DockerServer.port(in: "127.0.0.1:49153\n[::1]:49153") == 49153)
        #expect(try DockerServer.port(in: "[::]:5433") == 5433)
        for output in ["", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:http"] {
            #expect(throws: TestServerError.self, "\(output)") { try DockerServer.port(in: output) }
        }
    }

    @Test func dockerIsUsedOnlyWhenItReachesAnEngine() throws {
        let working = try FakeDocker(info: 0)
        defer { working.remove() }
        let noEngine = try FakeDocker(info: 1)
        defer { noEngine.remove() }
        #expect(DockerServer.command(environment: ["COREVALUE_DOCKER": working.path]) == working.path)
        #expect(working.calls == ["info"])
        #expect(DockerServer.command(environment: ["COREVALUE_DOCKER": noEngine.path]) == nil)
        #expect(DockerServer.command(environment: ["COREVALUE_DOCKER": "/nonexistent/docker"]) == nil)
    }
}
