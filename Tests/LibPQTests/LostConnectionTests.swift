import Foundation
import LibPQ
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A server that goes away while a statement is being written: libpq may report it as a failed result with
/// no SQLSTATE while `PQstatus` still says `CONNECTION_OK`. The driver must say the connection was lost (so
/// the store retries it like any other lost connection), not that the server broke the protocol.
@Suite struct LostConnectionTests {
    /// The server reads the start of the statement, sends the WARNING an immediate shutdown sends
    /// (57P01), and closes the socket with the rest of the statement unread (a reset, as a killed backend's).
    static func shutdownMidStatement(_ socket: Int32) {
        _ = FakeServer.read(socket, count: 1_024)
        FakeServer.write(
            socket,
            FakeServer.notice(
                severity: "WARNING", code: "57P01", "terminating connection due to immediate shutdown command"))
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
    }

    /// Runs `call` with a statement of `size` characters on a connection to a server that goes away while it
    /// is written, and expects `.connectionLost` and a connection that reports itself broken.
    static func expectLost(size: Int, _ call: (Connection, String) throws -> Void) throws {
        let server = try FakeServer(Self.shutdownMidStatement)
        defer { server.finish() }
        let connection = try Connection(server.conninfo)
        defer { connection.close() }
        let statement = "SELECT '" + String(repeating: "x", count: size) + "'"
        do {
            try call(connection, statement)
            Issue.record("the statement succeeded against a server that went away")
        } catch let error as LibPQError {
            #expect(error.code == .connectionLost, "\(error)")
        }
        #expect(connection.isBroken)
        #expect(!connection.isUsable)
    }

    @Test(arguments: [20_000, 100_000, 300_000])
    func aServerGoneWhileALongStatementIsWrittenIsALostConnection(size: Int) throws {
        try Self.expectLost(size: size) { connection, statement in
            try connection.query(statement, [PostgresValue(Int64(1))])
        }
    }

    @Test func aServerGoneWhileRowsAreReadIsALostConnection() throws {
        try Self.expectLost(size: 100_000) { connection, statement in
            try connection.queryRows(statement) { _ in }
        }
    }

    @Test func aServerGoneDuringExecuteIsALostConnection() throws {
        try Self.expectLost(size: 100_000) { connection, statement in
            try connection.execute(statement)
        }
    }

    @Test func aServerGoneWhileAPipelineIsWrittenIsALostConnection() throws {
        try Self.expectLost(size: 50_000) { connection, statement in
            _ = try connection.pipeline(Array(repeating: PipelineStatement(statement), count: 4))
        }
    }
}
