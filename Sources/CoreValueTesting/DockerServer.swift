import Foundation
import LibPQ
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway PostgreSQL server in a Docker container, the third way ``TestSchema`` finds a server: when
/// `DATABASE_URL` is unset, no PostgreSQL server binaries are installed (``TestServer``), and a `docker`
/// command works (`docker info` succeeds).
///
/// `docker run -d --rm -p 127.0.0.1::5432 postgres:15` with trust authentication and durability off, as a
/// test needs; Docker picks a free port on loopback (`docker port` says which), and the server is used once
/// it accepts connections (polled, within a bound). `docker rm -f` removes the container when the process
/// exits (`atexit`), and a watchdog does when the process dies otherwise, as ``TestServer``'s does.
/// `COREVALUE_DOCKER` names another executable than `docker` (Podman's, or a fake in the unit tests).
///
/// Untested with a real engine here: no Docker engine runs on the project's machines. The unit tests drive it
/// with a fake `docker` script, which covers the arguments, the parsing of its output and the cleanup.
final class DockerServer: Sendable {
    /// The image run: the PostgreSQL version the project tests.
    static let image = "postgres:15"
    /// The environment variable naming the executable (default `docker`, looked up in `PATH`).
    static let commandVariable = "COREVALUE_DOCKER"

    /// `postgresql://corevalue@127.0.0.1:<port>/postgres`: the `corevalue` superuser, as ``TestServer``'s.
    let url: String
    /// The container's ID, as `docker run` printed it.
    let container: String
    private let docker: String
    private let stopped = Mutex(false)

    private init(url: String, container: String, docker: String) {
        self.url = url
        self.container = container
        self.docker = docker
    }

    /// The `docker` command to use when it works (`docker info` exits with 0: the client is there and
    /// reaches an engine); `nil` otherwise.
    static func command(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let docker = environment[commandVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "docker"
        return (try? Subprocess.output(of: docker, ["info"])) != nil ? docker : nil
    }

    /// `docker run`'s arguments; the label names the test process, for a person looking at `docker ps`.
    static func runArguments(parent: pid_t) -> [String] {
        [
            "run", "-d", "--rm", "--label", "org.corevalue.test-process=\(parent)",
            "-e", "POSTGRES_HOST_AUTH_METHOD=trust", "-e", "POSTGRES_USER=corevalue", "-e", "POSTGRES_DB=postgres",
            "-p", "127.0.0.1::5432", image,
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c",
            "max_connections=200",
        ]
    }

    /// Runs a container and waits until its server accepts connections.
    ///
    /// - Parameters:
    ///   - docker: The executable (see ``command(environment:)``).
    ///   - parent: The process whose end the watchdog waits for.
    ///   - timeout: How long the server may take to accept connections once `docker run` returned (an image
    ///     pull happens before, inside `docker run`).
    ///   - isReady: Whether the server at a URL accepts connections.
    /// - Throws: ``TestServerError`` naming the step that failed, with its output; the container is removed
    ///   then.
    static func start(
        docker: String, watching parent: pid_t = getpid(), timeout: Duration = .seconds(60),
        isReady: (String) -> Bool = acceptsConnections
    ) throws -> DockerServer {
        let container = try containerID(in: Subprocess.output(of: docker, runArguments(parent: parent)))
        do {
            // Before the wait: a process that dies while the server starts leaves no container either.
            try Subprocess.watchdog(#""$2" rm -f "$3" >/dev/null 2>&1"#, parent: parent, [docker, container])
            let port = try port(in: Subprocess.output(of: docker, ["port", container, "5432/tcp"]))
            let url = "postgresql://corevalue@127.0.0.1:\(port)/postgres"
            // The image's entrypoint runs initdb and a server on a socket inside the container first; the
            // published port answers once the real server listens (Docker's proxy may take and drop a
            // connection before that: not ready either).
            let deadline = ContinuousClock.now + timeout
            while !isReady(url) {
                guard ContinuousClock.now < deadline else {
                    throw TestServerError(
                        "the \(image) container \(container) did not accept connections within \(timeout)")
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return DockerServer(url: url, container: container, docker: docker)
        } catch {
            _ = try? Subprocess.output(of: docker, ["rm", "-f", container])
            throw error
        }
    }

    /// Removes the container (`docker rm -f`: the server is killed, open connections end). Calling it again
    /// does nothing.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        _ = try? Subprocess.output(of: docker, ["rm", "-f", container])
    }

    /// The process's one container, started on first use and removed when the process exits; the same error
    /// again on every call when it could not be started.
    ///
    /// - Throws: As ``start(docker:watching:timeout:isReady:)``.
    static func shared(docker: String) throws -> DockerServer {
        try sharedServer.withLock { state in
            if let state { return try state.get() }
            let started = Result { try start(docker: docker) }
            state = started
            if case .success = started {
                atexit { try? DockerServer.sharedServer.withLock { try $0?.get() }?.stop() }
            }
            return try started.get()
        }
    }

    private static let sharedServer = Mutex<Result<DockerServer, any Error>?>(nil)

    /// The container ID in `docker run -d`'s output: its last line (a pull's progress may come before it).
    ///
    /// - Throws: ``TestServerError`` when that line is not 12 to 64 hexadecimal digits.
    static func containerID(in output: String) throws -> String {
        let last = output.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        guard (12...64).contains(last.count), last.allSatisfy(\.isHexDigit) else {
            throw TestServerError("docker run printed no container ID: \(output)")
        }
        return last
    }

    /// The host port in `docker port`'s output (`127.0.0.1:49153`, one line per address).
    ///
    /// - Throws: ``TestServerError`` when the first line does not end in a port number.
    static func port(in output: String) throws -> Int {
        let first = output.split(whereSeparator: \.isNewline).first ?? ""
        guard let colon = first.lastIndex(of: ":"), let port = Int(first[first.index(after: colon)...]),
            (1...65_535).contains(port)
        else {
            throw TestServerError("docker port printed no host port for 5432/tcp: \(output)")
        }
        return port
    }

    /// Whether a server at `url` takes a connection (within two seconds).
    static func acceptsConnections(_ url: String) -> Bool {
        guard let connection = try? Connection(url + "?connect_timeout=2") else { return false }
        connection.close()
        return true
    }
}
