import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The programs a test server needs (`pg_config`, `initdb`, `pg_ctl`, `docker`), run without
/// `Foundation.Process`, and the watchdog that cleans up after a test process that died: shared by
/// ``TestServer`` and the Docker fallback.
enum Subprocess {
    /// Starts a watchdog: a shell, in a session of its own (`setsid`, so that an interrupt of the test
    /// process's group spares it), that polls once a second until the process `parent` has ended, then runs
    /// `script` with `arguments` as `$2`, `$3`, ... (`$1` is `parent`). The script must do nothing harmful
    /// when the server was already stopped normally: the watchdog runs it then too.
    static func watchdog(_ script: String, parent: pid_t, _ arguments: [String]) throws {
        let body = #"while kill -0 "$1" 2>/dev/null; do sleep 1; done"# + "\n" + script
        let shell = ["-c", body, "watchdog", "\(parent)"] + arguments
        let setsid = ["/usr/bin/setsid", "/bin/setsid"].first { FileManager.default.isExecutableFile(atPath: $0) }
        if let setsid {
            try spawn(setsid, ["/bin/sh"] + shell, output: "/dev/null")
        } else {
            try spawn("/bin/sh", shell, output: "/dev/null")
        }
    }

    /// A program's output (standard output and error, trimmed) once it has exited with status 0; a name
    /// without a slash is looked up in `PATH`.
    ///
    /// Spawned directly and waited for with `waitpid`, the output going to a file: `pg_ctl start` leaves the
    /// server running, and a server that inherited a pipe, or the descriptor `Process` watches its child
    /// through, would keep it open, so the call would never return. For the same reason the program inherits
    /// no other descriptor of this process (see ``spawn(_:_:output:)``).
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
    /// the file at `output`; a name without a slash is looked up in `PATH`. The program inherits no other
    /// descriptor of this process: a watchdog lives as long as the test process, and a file it inherited open
    /// for writing could not be run until then (`ETXTBSY`), a socket would not close.
    ///
    /// - Throws: ``TestServerError`` naming the program and the reason (`Text file busy`, `No such file or
    ///   directory`) when it cannot be started.
    @discardableResult
    static func spawn(_ program: String, _ arguments: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Closed in the child, in its copy of the descriptor table, so that none another thread opens meanwhile
        // slips through (Foundation opens its files without O_CLOEXEC); marked in this process where that
        // cannot be done.
        if addCloseFrom?(&actions, 3) != 0 { markDescriptorsCloseOnExec() }
        let argv = ([program] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        var spawned = posix_spawnp(&pid, program, &actions, nil, argv + [nil], environ)
        // ETXTBSY: the program is open for writing somewhere. That is not always for long: when a thread of this
        // process has just written it (a test's fake `docker`), another thread's spawn may have copied the
        // descriptor table in between, and the copy holds the writer's descriptor until that child execs or
        // closes it, close-on-exec or not: microseconds, though a tenth of a second was seen on a loaded machine.
        // So a few more attempts over about a second; a program really being written (a `docker` being
        // installed) still fails, saying so.
        var retries = 0
        while spawned == ETXTBSY, retries < 10 {
            usleep(1_000 << UInt32(retries))
            retries += 1
            spawned = posix_spawnp(&pid, program, &actions, nil, argv + [nil], environ)
        }
        guard spawned == 0 else {
            let reason = String(cString: strerror(spawned))
            throw TestServerError("could not start \(program): \(reason) (errno \(spawned))")
        }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up when first used so that
    /// the package still builds against an older C library; `nil` there and on Darwin.
    private static let addCloseFrom: AddCloseFrom? = dlsym(
        dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np"
    ).map { unsafeBitCast($0, to: AddCloseFrom.self) }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Where the child cannot close them itself: marks every open descriptor above standard error
    /// close-on-exec. A descriptor another thread opens while this runs, or before the spawn, is still
    /// inherited.
    private static func markDescriptorsCloseOnExec() {
        let limit = min(Int32(sysconf(Int32(_SC_OPEN_MAX))), 65_536)
        guard limit > 3 else { return }
        for descriptor in 3..<limit {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
