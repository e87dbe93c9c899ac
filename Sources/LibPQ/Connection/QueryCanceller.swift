import CLibPQ

/// Cancels the statement a connection is running, from any thread (`PQcancel`).
///
/// Make one with ``Connection/makeCanceller()`` before starting a long statement and hand it to another
/// thread or task; the canceled statement fails with ``SQLState/queryCanceled`` (57014).
/// ```swift
/// let canceller = try connection.makeCanceller()
/// Thread { try? canceller.cancel() }.start()
/// ```
/// A cancel request is a hint: when it arrives after the statement finished, nothing happens.
package final class QueryCanceller: @unchecked Sendable {
    // @unchecked: the PGcancel object is written once (PQgetCancel) and only read afterwards; libpq
    // documents PQcancel as safe to call from other threads (and signal handlers). Freed in deinit.
    private let handle: OpaquePointer

    init(taking handle: OpaquePointer) { self.handle = handle }

    deinit { PQfreeCancel(handle) }

    /// Asks the server to cancel the connection's current statement.
    ///
    /// - Throws: ``LibPQError`` `.cancelFailed` with libpq's reason when the request could not be sent.
    package func cancel() throws {
        var message = [CChar](repeating: 0, count: 256)
        let sent = message.withUnsafeMutableBufferPointer { PQcancel(handle, $0.baseAddress, Int32($0.count)) }
        guard sent == 1 else {
            let reason = message.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { String(cString: $0) } ?? "unknown reason"
            }
            throw LibPQError(.cancelFailed, "could not send the cancel request: \(reason.trimmingTrailingNewlines())")
        }
    }
}

extension Connection {
    /// A ``QueryCanceller`` for this connection's current backend: made once per backend and kept (the
    /// store asks for one around every statement of an async call; `PQgetCancel` allocates), made afresh after
    /// ``reset()``.
    ///
    /// - Throws: ``LibPQError`` `.connectionClosed`, or `.connectionLost` when the connection is broken.
    package func makeCanceller() throws -> QueryCanceller {
        let handle = try requireHandle()
        // A connection whose server went away gets no canceller, kept or not (`PQgetCancel` fails then).
        if let canceller, PQstatus(handle) != CONNECTION_BAD { return canceller }
        guard let cancel = PQgetCancel(handle) else { throw clientError(handle, "creating a cancel handle") }
        let made = QueryCanceller(taking: cancel)
        canceller = made
        return made
    }
}
