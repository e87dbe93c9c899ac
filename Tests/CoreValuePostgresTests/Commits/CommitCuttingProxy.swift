import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy of the test's own between the store and the server that, once armed, cuts the first
/// connection that sends a `COMMIT` at that moment, deterministically (a transaction without `BEGIN`, the
/// implicit one of a pipeline, commits at its `Sync`, which counts as its `COMMIT` here):
/// - ``Cut/afterCommit``: the `COMMIT` (and what follows it to the `Sync`) reaches the server, which commits;
///   its reply never reaches the client, whose connection is closed once the server said `ReadyForQuery`.
/// - ``Cut/beforeCommit``: the `COMMIT` and what follows never reach the server; the client's connection is
///   closed, the server's is kept open, so its backend stays idle in the transaction with its locks until
///   the store's lookup ends it.
/// - ``Cut/beforeStatement(_:)``: the same at the first statement whose text contains the given string, before
///   `COMMIT` was sent: the backend stays inside the transaction with the locks of the statements before it,
///   waiting for input, as after a network partition that made the client give up on the connection.
///
/// Reads the v3 protocol's framing in both directions, nothing more: the client must connect with
/// `sslmode=disable gssencmode=disable` (no SSLRequest before the startup packet). Each connection is pumped by two threads.
final class CommitCuttingProxy: @unchecked Sendable {
    enum Cut: Sendable, Equatable {
        case afterCommit, beforeCommit
        case beforeStatement(String)
    }

    let port: UInt16
    private let listener: Int32
    private let armed = Mutex<Cut?>(nil)
    private let fired = Mutex(0)
    private let sockets = Mutex<[Int32]>([])

    /// Listens on a loopback port of its own and forwards each connection to `host:port`.
    init(to host: String, port target: UInt16) throws {
        guard let bound = LoopbackSocket.bind(listening: 16) else {
            throw ProxyError("cannot listen on loopback: errno \(errno)")
        }
        listener = bound.socket
        port = bound.port
        let thread = Thread { [self] in acceptLoop(host: host, port: target) }
        thread.start()
    }

    /// Cuts the next connection that sends a `COMMIT` (or the statement of ``Cut/beforeStatement(_:)``), as
    /// `cut` says.
    func arm(_ cut: Cut) { armed.withLock { $0 = cut } }
    /// The armed cut, disarmed, when `message` is what it waits for; `commits`: it ends a transaction.
    private func takeArmed(at message: [UInt8], commits: Bool) -> Cut? {
        armed.withLock { value in
            guard let cut = value else { return nil }
            let text = Self.statementText(message)
            switch cut {
            case .afterCommit, .beforeCommit:
                guard commits else { return nil }
            case .beforeStatement(let wanted):
                guard let text, String(decoding: text, as: UTF8.self).contains(wanted) else { return nil }
            }
            value = nil
            return cut
        }
    }

    /// How many connections were cut.
    var cuts: Int { fired.withLock { $0 } }

    /// Stops listening and closes every connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in sockets.withLock({ $0 }) { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(host: String, port: UInt16) {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            guard let server = Self.connect(host, port) else {
                close(client)
                continue
            }
            sockets.withLock { $0 += [client, server] }
            let cutting = Flag()
            Thread { [self] in pumpClient(client, server, cutting) }.start()
            Thread { [self] in pumpServer(server, client, cutting) }.start()
        }
    }

    /// Client to server, message by message, watching for `COMMIT`.
    private func pumpClient(_ client: Int32, _ server: Int32, _ cutting: Flag) {
        // The startup packet has no type byte; every message after it has one.
        var typed = false
        // Inside a transaction begun with `BEGIN`; a statement other than a `SELECT` bound since the last
        // `Sync`; the text of each prepared statement, by name.
        var explicit = false
        var writes = false
        var prepared: [ArraySlice<UInt8>: ArraySlice<UInt8>] = [:]
        while let message = Self.readMessage(client, typed: typed) {
            typed = true
            let text = Self.statementText(message)
            func starts(_ word: String) -> Bool { text?.starts(with: Array(word.utf8)) == true }
            let commits: Bool
            switch message.first {
            case UInt8(ascii: "B"):
                // Portal name, then the statement's name.
                let statement = message.dropFirst(5).drop { $0 != 0 }.dropFirst().prefix { $0 != 0 }
                let bound = prepared[statement] ?? []
                let control = ["SELECT", "BEGIN", "COMMIT", "ROLLBACK"].contains { bound.starts(with: Array($0.utf8)) }
                if !bound.isEmpty && !control { writes = true }
                commits = false
            case UInt8(ascii: "S"):
                // Without BEGIN, the pipeline's statements are one transaction that the Sync commits.
                commits = !explicit && writes
                writes = false
            case UInt8(ascii: "P"):
                let name = message.dropFirst(5).prefix { $0 != 0 }
                prepared[ArraySlice(name)] = ArraySlice(text?.prefix { $0 != 0 } ?? [])
                fallthrough
            default:
                commits = starts("COMMIT\u{0}")
                if starts("BEGIN") { explicit = true }
                if commits || starts("ROLLBACK") { explicit = false }
            }
            if let cut = takeArmed(at: message, commits: commits) {
                fired.withLock { $0 += 1 }
                switch cut {
                case .beforeCommit, .beforeStatement:
                    // Nothing more reaches the server; the client's connection ends now.
                    shutdown(client, Int32(SHUT_RDWR))
                    return
                case .afterCommit:
                    cutting.set()
                }
            }
            guard Self.write(server, message) else { break }
        }
        shutdown(server, Int32(SHUT_WR))
    }

    /// Server to client; once cutting, replies are dropped, and the client's connection ends at the server's
    /// next `ReadyForQuery` (the `COMMIT` done).
    private func pumpServer(_ server: Int32, _ client: Int32, _ cutting: Flag) {
        while let message = Self.readMessage(server, typed: true) {
            if cutting.isSet {
                if message.first == UInt8(ascii: "Z") {
                    shutdown(client, Int32(SHUT_RDWR))
                    break
                }
                continue
            }
            guard Self.write(client, message) else { break }
        }
        shutdown(client, Int32(SHUT_RDWR))
    }

    /// The query text of a `Parse` or simple `Query` (NUL-terminated), `nil` for other messages.
    private static func statementText(_ message: [UInt8]) -> ArraySlice<UInt8>? {
        guard let type = message.first, type == UInt8(ascii: "P") || type == UInt8(ascii: "Q") else { return nil }
        let body = message.dropFirst(5)
        // Parse: statement name (NUL-terminated), then the query text.
        return type == UInt8(ascii: "P") ? body.drop { $0 != 0 }.dropFirst() : body
    }

    /// One message: a type byte (when `typed`) and a 4-byte length that counts itself. `nil` at the end.
    private static func readMessage(_ socket: Int32, typed: Bool) -> [UInt8]? {
        guard let header = read(socket, count: typed ? 5 : 4) else { return nil }
        let length = Int(header.suffix(4).withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) })
        guard length >= 4, let body = read(socket, count: length - 4) else { return nil }
        return header + body
    }

    private static func read(_ socket: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { recv(socket, $0 + done, count - done, 0) } ?? -1
            }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    private static func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { send(socket, $0 + done, bytes.count - done, Int32(MSG_NOSIGNAL)) } ?? -1
            }
            guard sent > 0 else { return false }
            done += sent
        }
        return true
    }

    private static func connect(_ host: String, _ port: UInt16) -> Int32? {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard server >= 0, connected else {
            close(server)
            return nil
        }
        return server
    }
}

/// Whether one connection is being cut, shared by its two pumps.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

struct ProxyError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
