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
