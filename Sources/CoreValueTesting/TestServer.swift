import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway PostgreSQL server for a test process, started from the PostgreSQL binaries on the machine:
/// a cluster made with `initdb` in a temporary directory, listening on a Unix socket in that directory only
/// (no TCP port to find free or to collide on), trusting local connections, with durability off (`fsync`,
/// `synchronous_commit`, `full_page_writes`), as a test needs. ``stop()`` stops it and deletes the directory.
///
/// ``TestSchema`` starts one on first use when `DATABASE_URL` is unset (``shared()``), so a new
/// contributor's `swift test` needs no database set up first; it is stopped when the process exits
/// normally. When the process dies otherwise (killed, crashed), a watchdog started with the server (a shell
/// in a session of its own, which polls the process once a second) stops the server and deletes the
/// directory.
///
/// The binaries come from `COREVALUE_PG_BIN` when set, else `pg_config --bindir`, else the usual places
/// (`/usr/lib/postgresql/<version>/bin`, Homebrew's, `/usr/local/pgsql/bin`). `initdb` and `postgres` refuse
/// to run as root: as root they run as the `postgres` user (`runuser`), which must exist.
public final class TestServer: Sendable {
    /// The server's connection string (the `corevalue` superuser, the `postgres` database).
    public let url: String
    /// The port number in its socket's name (`.s.PGSQL.<port>` in ``directory``'s `sock`); it listens on no
    /// TCP port.
    public let port: Int
    /// The temporary directory holding the cluster (`data`), its socket and its log.
    public let directory: URL
    private let binaries: URL
    private let stopped = Mutex(false)

    private init(url: String, port: Int, directory: URL, binaries: URL) {
        self.url = url
        self.port = port
        self.directory = directory
        self.binaries = binaries
    }

    /// Makes and starts a new server (about a second).
    ///
    /// - Throws: ``TestServerError`` naming what was missing or which step failed, with its output; nothing
    ///   is left behind then.
    public static func start() throws -> TestServer {
        try start(watching: getpid())
    }

    /// ``start()`` with a watchdog that stops the server when the process `parent` is gone.
    static func start(watching parent: pid_t) throws -> TestServer {
        let binaries = try findBinaries()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("corevalue-test-\(UUID().uuidString.prefix(8).lowercased())", isDirectory: true)
        let data = directory.appendingPathComponent("data")
        let socket = directory.appendingPathComponent("sock")
        do {
            try FileManager.default.createDirectory(at: socket, withIntermediateDirectories: true)
            try ServerOwner.current.own(directory)
            try ServerOwner.current.run(
                binaries.appendingPathComponent("initdb"),
                ["-D", data.path, "-U", "corevalue", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"])
            // The socket is in a directory of this server's own, so any port number names it uniquely.
            let port = 5432
            let options = [
                "-p \(port)", "-k \(socket.path)", "-c listen_addresses=''", "-c fsync=off",
                "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
            ]
            try ServerOwner.current.run(
                binaries.appendingPathComponent("pg_ctl"),
                [
                    "-D", data.path, "-l", directory.appendingPathComponent("server.log").path, "-o",
                    options.joined(separator: " "), "-w", "-t", "60", "start",
                ])
            try ServerOwner.current.watch(
                parent, pgCtl: binaries.appendingPathComponent("pg_ctl"), data: data, directory: directory)
            return TestServer(
                url: "postgresql://corevalue@/postgres?host=\(socket.path)&port=\(port)", port: port,
                directory: directory,
                binaries: binaries)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Stops the server (fast shutdown: open connections are ended) and deletes its directory. Calling it
    /// again does nothing.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? ServerOwner.current.run(
            binaries.appendingPathComponent("pg_ctl"),
            ["-D", directory.appendingPathComponent("data").path, "-m", "fast", "-w", "-t", "60", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// The process's one server, started on first use and stopped when the process exits; the same error
    /// again on every call when it could not be started.
    ///
    /// - Throws: As ``start()``.
    public static func shared() throws -> TestServer {
        try sharedServer.withLock { state in
            if let state { return try state.get() }
            let started = Result { try start() }
            state = started
            if case .success = started { atexit { try? TestServer.sharedServer.withLock { try $0?.get() }?.stop() } }
            return try started.get()
        }
    }

    private static let sharedServer = Mutex<Result<TestServer, any Error>?>(nil)

    /// Whether the binaries a server needs were found (see the type's description).
    public static var canStart: Bool { (try? findBinaries()) != nil }

    private static func findBinaries() throws -> URL {
        var candidates: [String] = []
        if let given = ProcessInfo.processInfo.environment["COREVALUE_PG_BIN"], !given.isEmpty {
            candidates.append(given)
        }
        if let bindir = try? ServerOwner.output(of: "pg_config", ["--bindir"]) { candidates.append(bindir) }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            candidates.append("/usr/lib/postgresql/\(version)/bin")
        }
        candidates += ["/opt/homebrew/bin", "/usr/local/bin", "/usr/local/pgsql/bin", "/usr/bin"]
        for candidate in candidates
        where FileManager.default.isExecutableFile(atPath: candidate + "/initdb")
            && FileManager.default.isExecutableFile(atPath: candidate + "/pg_ctl")
        {
            return URL(fileURLWithPath: candidate, isDirectory: true)
        }
        throw TestServerError(
            "no PostgreSQL server binaries (initdb, pg_ctl) found in \(candidates.joined(separator: ", ")); install "
                + "the server (Debian: postgresql) or set COREVALUE_PG_BIN to their directory")
    }

}

/// A test server that could not be found or started.
public struct TestServerError: Error, CustomStringConvertible {
    /// What was missing, or which step failed with its output.
    public var description: String

    init(_ description: String) { self.description = description }
}

/// Who runs the server's programs: this process's user, or, for root (which `initdb` and `postgres`
/// refuse), the `postgres` user through `runuser`.
private struct ServerOwner {
    /// `nil`: this process's user.
    let user: String?

    static let current = ServerOwner(user: geteuid() == 0 ? "postgres" : nil)

    /// Hands `directory` (and what is in it) to the server's user.
    func own(_ directory: URL) throws {
        guard let user else { return }
        guard let account = getpwnam(user) else {
            throw TestServerError("running as root, but there is no '\(user)' user to run PostgreSQL as")
        }
        let (uid, gid) = (account.pointee.pw_uid, account.pointee.pw_gid)
        for path in [directory.path, directory.appendingPathComponent("sock").path] where chown(path, uid, gid) != 0 {
            throw TestServerError("could not hand \(path) to the '\(user)' user (errno \(errno))")
        }
    }

    /// Starts the watchdog: a shell, in a session of its own (`setsid`, so that an interrupt of the test
    /// process's group spares it), that waits for `parent` to end and then stops the server immediately and
    /// deletes `directory`; after a normal ``TestServer/stop()`` there is nothing left for it to do.
    func watch(_ parent: pid_t, pgCtl: URL, data: URL, directory: URL) throws {
        let script = [
            #"while kill -0 "$1" 2>/dev/null; do sleep 1; done"#,
            #"if [ -d "$3" ]; then"#,
            #"  if [ -n "$5" ]; then runuser -u "$5" -- "$2" -D "$3" -m immediate stop"#,
            #"  else "$2" -D "$3" -m immediate stop; fi"#,
            #"fi"#,
            #"rm -rf "$4""#,
        ].joined(separator: "\n")
        let arguments = ["-c", script, "watchdog", "\(parent)", pgCtl.path, data.path, directory.path, user ?? ""]
        let setsid = ["/usr/bin/setsid", "/bin/setsid"].first { FileManager.default.isExecutableFile(atPath: $0) }
        if let setsid {
            try Self.spawn(setsid, ["/bin/sh"] + arguments, output: "/dev/null")
        } else {
            try Self.spawn("/bin/sh", arguments, output: "/dev/null")
        }
    }

    /// Runs a program to its end.
    ///
    /// - Throws: ``TestServerError`` with the program's output when it fails.
    func run(_ program: URL, _ arguments: [String]) throws {
        if let user {
            _ = try Self.output(of: "runuser", ["-u", user, "--", program.path] + arguments)
        } else {
            _ = try Self.output(of: program.path, arguments)
        }
    }

    /// A program's output (standard output and error, trimmed) once it has exited with status 0; a name
    /// without a slash is looked up in `PATH`.
    ///
    /// Spawned directly and waited for with `waitpid`, the output going to a file: `pg_ctl start` leaves the
    /// server running, and a server that inherited a pipe, or the descriptor `Process` watches its child
    /// through, would keep it open, so the call would never return. For the same reason every descriptor of
    /// this process is marked close-on-exec first.
    static func output(of program: String, _ arguments: [String]) throws -> String {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("corevalue-test-output-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let pid = try spawn(program, arguments, output: file.path)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestServerError("could not wait for \(program) (errno \(errno))") }
        }
        let bytes = (try? Data(contentsOf: file)) ?? Data()
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Exited normally with status 0 (the wait status's low seven bits are 0 for an exit).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let name = URL(fileURLWithPath: program).lastPathComponent
            throw TestServerError("\(name) failed (wait status \(status)): \(text)")
        }
        return text
    }

    /// Starts a program without waiting for it, its input from `/dev/null` and its output (both streams) to
    /// the file at `output`; a name without a slash is looked up in `PATH`.
    @discardableResult
    static func spawn(_ program: String, _ arguments: [String], output: String) throws -> pid_t {
        closeDescriptorsOnExec()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([program] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, program, &actions, nil, argv + [nil], environ)
        guard spawned == 0 else { throw TestServerError("could not start \(program) (error \(spawned))") }
        return pid
    }

    /// Marks every open descriptor above standard error close-on-exec, so that a spawned program (and the
    /// server it leaves running) inherits none of this process's files or sockets.
    private static func closeDescriptorsOnExec() {
        let limit = min(Int32(sysconf(Int32(_SC_OPEN_MAX))), 65_536)
        guard limit > 3 else { return }
        for descriptor in 3..<limit {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
