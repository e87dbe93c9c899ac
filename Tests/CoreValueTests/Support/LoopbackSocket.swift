import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket bound to a free port on 127.0.0.1, for tests that need a port of their own: a proxy that
/// listens on it, or a port where nothing listens once it is closed.
enum LoopbackSocket {
    /// Binds a new socket to a free loopback port (listening with `backlog` when given); `nil` when that
    /// failed (the socket is closed then).
    static func bind(listening backlog: Int32? = nil) -> (socket: Int32, port: UInt16)? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                Glibc.bind(socket, address, length) == 0 && (backlog.map { listen(socket, $0) == 0 } ?? true)
                    && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            return nil
        }
        return (socket, UInt16(bigEndian: address.sin_port))
    }
}
