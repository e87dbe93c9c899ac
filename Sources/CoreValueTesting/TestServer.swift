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
        if let bindir = try? Subprocess.output(of: "pg_config", ["--bindir"]) { candidates.append(bindir) }
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

    /// Starts the watchdog (`Subprocess.watchdog`): once `parent` has ended, it stops the
    /// server immediately and deletes `directory`; after a normal ``TestServer/stop()`` there is nothing left
    /// for it to do.
    func watch(_ parent: pid_t, pgCtl: URL, data: URL, directory: URL) throws {
        let script = [
            #"if [ -d "$3" ]; then"#,
            #"  if [ -n "$5" ]; then runuser -u "$5" -- "$2" -D "$3" -m immediate stop"#,
            #"  else "$2" -D "$3" -m immediate stop; fi"#,
            #"fi"#,
            #"rm -rf "$4""#,
        ].joined(separator: "\n")
        try Subprocess.watchdog(script, parent: parent, [pgCtl.path, data.path, directory.path, user ?? ""])
    }

    /// Runs a program to its end.
    ///
    /// - Throws: ``TestServerError`` with the program's output when it fails.
    func run(_ program: URL, _ arguments: [String]) throws {
        if let user {
            _ = try Subprocess.output(of: "runuser", ["-u", user, "--", program.path] + arguments)
        } else {
            _ = try Subprocess.output(of: program.path, arguments)
        }
    }
}
