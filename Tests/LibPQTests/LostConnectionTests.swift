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

    @Test(arguments: [20_000, 100_000, 300_000])
    func aServerGoneWhileALongStatementIsWrittenIsALostConnection(size: Int) throws {
        let server = try FakeServer(Self.shutdownMidStatement)
        defer { server.finish() }
        let connection = try Connection(server.conninfo)
        defer { connection.close() }
        let statement = "SELECT '" + String(repeating: "x", count: size) + "'"
        do {
            try connection.query(statement, [PostgresValue(Int64(1))])
            Issue.record("the statement succeeded against a server that went away")
        } catch let error as LibPQError {
            #expect(error.code == .connectionLost, "\(error)")
        }
        #expect(connection.isBroken)
        #expect(!connection.isUsable)
    }

    @Test func aServerGoneWhileRowsAreReadIsALostConnection() throws {
        let server = try FakeServer(Self.shutdownMidStatement)
        defer { server.finish() }
        let connection = try Connection(server.conninfo)
        defer { connection.close() }
        let statement = "SELECT '" + String(repeating: "x", count: 100_000) + "'"
        #expect(throws: LibPQError.self) {
            do {
                try connection.queryRows(statement) { _ in }
            } catch let error as LibPQError {
                #expect(error.code == .connectionLost, "\(error)")
                throw error
            }
        }
        #expect(connection.isBroken)
    }

    @Test func aServerGoneDuringExecuteIsALostConnection() throws {
        let server = try FakeServer(Self.shutdownMidStatement)
        defer { server.finish() }
        let connection = try Connection(server.conninfo)
        defer { connection.close() }
        let statement = "SELECT '" + String(repeating: "x", count: 100_000) + "'"
        do {
            try connection.execute(statement)
            Issue.record("the statement succeeded against a server that went away")
        } catch let error as LibPQError {
            #expect(error.code == .connectionLost, "\(error)")
        }
        #expect(connection.isBroken)
    }

    @Test func aServerGoneWhileAPipelineIsWrittenIsALostConnection() throws {
        let server = try FakeServer(Self.shutdownMidStatement)
        defer { server.finish() }
        let connection = try Connection(server.conninfo)
        defer { connection.close() }
        let statement = "SELECT '" + String(repeating: "x", count: 50_000) + "'"
        do {
            _ = try connection.pipeline(Array(repeating: PipelineStatement(statement), count: 4))
            Issue.record("the pipeline succeeded against a server that went away")
        } catch let error as LibPQError {
            #expect(error.code == .connectionLost, "\(error)")
        }
        #expect(connection.isBroken)
    }
}
