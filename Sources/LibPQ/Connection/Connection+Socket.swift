import CLibPQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Connection {
    /// Waits with `poll()` until the connection's socket is readable (or writable, if asked), or the
    /// timeout passes; returns whether it became ready. A negative timeout waits indefinitely.
    ///
    /// - Throws: ``LibPQError`` `.connectionLost` when the socket is gone or `poll` fails.
    func waitForSocket(_ handle: OpaquePointer, writable: Bool = false, timeoutMilliseconds: Int32) throws -> Bool {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw clientError(handle, "waiting for the server") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN) | (writable ? Int16(POLLOUT) : 0), revents: 0)
        while true {
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready >= 0 { return ready > 0 }
            if errno == EINTR { continue }
            throw LibPQError(.connectionLost, "poll() on the connection's socket failed (errno \(errno))")
        }
    }
}
