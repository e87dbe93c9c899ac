import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of a few dozen lines, on a loopback port of its own, for failures a real server
/// produces only by chance: it accepts one connection, answers the startup with `AuthenticationOk` and
/// `ReadyForQuery`, then plays `script` on the socket.
///
/// Speaks the v3 protocol's messages only as far as the scripts need them; the client must connect with
/// `sslmode=disable gssencmode=disable` (no `SSLRequest` comes first).
final class FakeServer: @unchecked Sendable {
    /// What the server does once the session is ready; given the accepted socket.
    typealias Script = @Sendable (_ socket: Int32) -> Void

    let port: UInt16
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)

    init(_ script: @escaping Script) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw FakeServerError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw FakeServerError("bind/listen: errno \(errno)")
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let done = self.done
        let thread = Thread {
            defer { done.signal() }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            guard Self.startup(client) else { return }
            script(client)
        }
        thread.start()
    }

    /// The libpq connection string for this server.
    var conninfo: String {
        "host=127.0.0.1 port=\(port) user=fake dbname=fake sslmode=disable gssencmode=disable connect_timeout=5"
    }

    /// Waits for the script to end, then stops listening.
    func finish() {
        done.wait()
        close(listener)
    }

    /// Reads the startup packet and answers `AuthenticationOk`, `BackendKeyData` and `ReadyForQuery` (idle).
    private static func startup(_ socket: Int32) -> Bool {
        guard let header = read(socket, count: 4) else { return false }
        let length = Int(header.withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) })
        guard length >= 8, read(socket, count: length - 4) != nil else { return false }
        var reply = message("R", int32(0))
        reply += message("K", int32(4242) + int32(1))
        reply += message("Z", [UInt8(ascii: "I")])
        return write(socket, reply)
    }

    /// Reads exactly `count` bytes, or `nil` when the peer closed first.
    static func read(_ socket: Int32, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(socket, buffer.baseAddress.map { $0 + done }, count - done)
            }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }

    /// Writes all of `bytes`; `false` when the peer is gone.
    @discardableResult
    static func write(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                send(socket, buffer.baseAddress.map { $0 + done }, bytes.count - done, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            done += sent
        }
        return true
    }

    /// A backend message: its type byte, its length and its body.
    static func message(_ type: Character, _ body: [UInt8]) -> [UInt8] {
        [UInt8(type.asciiValue ?? 0)] + int32(Int32(body.count + 4)) + body
    }

    /// A `NoticeResponse` (or, with type `E`, an `ErrorResponse`) with severity, SQLSTATE and message.
    static func notice(_ type: Character = "N", severity: String, code: String, _ text: String) -> [UInt8] {
        var body: [UInt8] = []
        for (field, value) in [("S", severity), ("V", severity), ("C", code), ("M", text)] {
            body += Array(field.utf8) + Array(value.utf8) + [0]
        }
        return message(type, body + [0])
    }

    static func int32(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

struct FakeServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
