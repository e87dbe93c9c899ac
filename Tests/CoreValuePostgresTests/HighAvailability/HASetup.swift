import Foundation
import LibPQ
import Testing

/// The multi-server setup `make test-ha` starts (`scripts/ha-up.sh`): a primary and a synchronous streaming
/// standby on loopback, pgbouncer in front, and `scripts/ha-ctl.sh` to fail over and restart servers.
enum HASetup {
    static let environment = ProcessInfo.processInfo.environment
    /// Both nodes, `target_session_attrs=read-write`: whichever is the primary.
    static var primaryURL: String? { environment["HA_MULTI_URL"] }
    /// Both nodes, `target_session_attrs=prefer-standby`.
    static var preferStandbyURL: String? { environment["HA_STANDBY_PREFER_URL"] }
    /// pgbouncer in transaction mode, in front of the primary.
    static var pgbouncerURL: String? { environment["HA_PGBOUNCER_URL"] }
    /// Both nodes, `target_session_attrs=read-write`, over TLS as a managed database takes it
    /// (`sslmode=verify-full`, `channel_binding=require`, a SCRAM password from a passfile).
    static var tlsURL: String? { environment["HA_TLS_MULTI_URL"] }
    static var control: String? { environment["HA_CTL"] }
    static var isAvailable: Bool {
        primaryURL != nil && preferStandbyURL != nil && pgbouncerURL != nil && control != nil
    }

    /// Runs `scripts/ha-ctl.sh <command>` and waits for it; its output is returned for the test's log.
    ///
    /// Spawned and reaped directly (`posix_spawn`, `waitpid`): `Foundation.Process` sometimes never notices
    /// the exit of a script that started daemons.
    @discardableResult
    static func run(_ arguments: String...) throws -> String {
        let script = try #require(control)
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("ha-ctl-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv = ([script] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, script, &actions, nil, argv, environ)
        try #require(spawned == 0, "could not start \(script): errno \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        // Exited normally with 0: WIFEXITED and WEXITSTATUS, which Swift does not import.
        try #require(status & 0x7f == 0 && (status >> 8) & 0xff == 0, "ha-ctl \(arguments) failed: \(output)")
        return output
    }

    /// Whether the server at the host and port of `connection` is a standby.
    static func isStandby(_ connection: Connection) throws -> Bool {
        try connection.query("SELECT pg_is_in_recovery()").decode(Bool.self, row: 0, column: 0)
    }

    /// Waits (bounded) until `condition` holds, polling every 20 ms; records an issue naming `what` when it
    /// does not within `timeout`.
    static func wait(_ what: String, timeout: Duration = .seconds(60), _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not within \(timeout): \(what)")
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
