import CLibPQ

/// One libpq connection to a PostgreSQL server: synchronous, used by one thread at a time.
///
/// Parameters and results use PostgreSQL's binary format, so results never depend on `DateStyle` or
/// other session settings.
/// ```swift
/// let connection = try Connection("postgresql://app@localhost/app")
/// let result = try connection.query("select $1::int8 + 1", [PostgresValue(Int64(41))])
/// let answer = try result.decode(Int64.self, row: 0, column: 0)   // 42
/// ```
/// A closed connection throws ``LibPQError`` `.connectionClosed`; one whose server went away throws
/// `.connectionLost` and reports ``isBroken``; ``reset()`` reconnects it.
package final class Connection {
    /// The libpq handle; `nil` once closed, so later calls throw instead of touching freed memory.
    var handle: OpaquePointer?
    /// The SQL of statements prepared on this session, for error messages.
    var preparedStatements: [String: String] = [:]
    /// The statements this connection prepared for its own calls (see ``statementCacheCapacity``).
    ///
    /// This and the two counters below are the connection's storage that every statement touches, and the
    /// only properties here marked `@exclusivity(unchecked)`: the compiler could not prove their accesses
    /// exclusive (the cache's mutations call into the standard library; the counters are read from the store's
    /// module), so each access was checked at run time, about thirty checks per request. Nothing inside an access
    /// to them reaches the connection again, and a connection has one user at a time (the pool's rule), so no
    /// two accesses can overlap.
    @exclusivity(unchecked) var statementCache = StatementCache(capacity: 0)
    /// The `BEGIN` of a ``withTransaction(isolation:readOnly:beginWithFirstStatement:_:)`` not sent yet: it
    /// goes to the server with the transaction's first statement.
    var pendingBegin: String?
    /// See ``backendIdentity``.
    private var backendStart: String?
    /// The canceller of the current backend (``makeCanceller()``); dropped by ``reset()``, which connects to
    /// another.
    var canceller: QueryCanceller?
    /// The state of a transaction whose `COMMIT` goes in the pipeline of its last statement (see
    /// ``commitWithNextStatement(asImplicitTransaction:)``).
    var pipelinedCommit = PipelinedCommit.forbidden
    /// A counter for savepoint names of nested ``withTransaction(isolation:readOnly:_:)`` calls.
    var nextSavepoint = 0
    /// Whether libpq may still hold the single-row mode of the last ``queryRows(_:_:_:)``: libpq 15 resets it
    /// when it starts a command outside a pipeline, or moves to the next command of a pipeline, but not for
    /// a pipeline's first command, which would then get its rows one result each. A pipeline whose first
    /// command is the caller's (an implicit transaction's, without `BEGIN`) is sent only when this is `false`.
    var singleRowModeMayLinger = false
    /// Why the connection must not be used again although libpq still reports `CONNECTION_OK` (reading
    /// from its socket failed, or a pipeline could not be finished); cleared by ``reset()``.
    var unusableReason: String?
    /// How the connection was configured (its description hides the password).
    package let configuration: ConnectionConfiguration
    /// When the session was established (by the initialiser or the last ``reset()``): a pool's clock for
    /// retiring old connections.
    package private(set) var connectedAt: ContinuousClock.Instant
    /// How many times this connection sent the server something and waited for its answer: one per
    /// statement run alone, one per pipeline or COPY, one per statement prepared for the cache. A count for
    /// tests and statistics (deterministic, unlike timings).
    @exclusivity(unchecked) package internal(set) var roundTrips = 0
    /// How many statements this connection prepared for its statement cache.
    @exclusivity(unchecked) package internal(set) var statementsPrepared = 0

    /// How many statements ``query(_:_:)``, ``queryRows(_:_:_:)`` and pipelined statements keep prepared,
    /// keyed by SQL text and parameter types; 0 (the default) sends every statement unnamed.
    ///
    /// With a cache, a statement seen for the first time is prepared under a name of the connection's own
    /// (one more round trip, or none in a pipeline, where the preparation goes with it) and later calls
    /// execute it by name: the server parses and plans it once per session. The least recently used
    /// statement is dropped beyond the capacity (deallocated the next time the connection is idle).
    /// A statement the server rejects as stale (its plan's result type changed after a schema change, 0A000
    /// from `RevalidateCachedQuery`) is dropped and, outside a transaction, prepared and run again once; inside
    /// one, the error is thrown (the transaction is aborted) and a retry prepares it afresh. A server that no
    /// longer knows a statement this connection prepared (26000: `DISCARD ALL`, or a pooler such as pgbouncer in
    /// transaction mode that moved the session to another server connection) turns the cache off for the
    /// connection: preparing again could never be relied on.
    package var statementCacheCapacity: Int {
        get { statementCache.capacity }
        set { statementCache.resize(to: newValue) }
    }

    /// Connects (blocking) with a parsed configuration.
    ///
    /// - Throws: ``LibPQError`` `.connectionFailed` with libpq's message when no server accepts.
    package init(_ configuration: ConnectionConfiguration) throws {
        self.configuration = configuration
        self.connectedAt = .now
        guard let handle = PQconnectdb(configuration.conninfo) else {
            throw LibPQError(.connectionFailed, "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
            PQfinish(handle)
            throw LibPQError(connectionFailed: message, context: "could not connect (\(configuration))")
        }
        self.handle = handle
        // Server notices (e.g. "there is no transaction in progress") are not errors; keep stderr quiet. A
        // FATAL error the server sends while the connection is idle (pg_terminate_backend, shutdown) also
        // arrives here: libpq treats it as a notice, so the receiver marks the connection unusable. `self`
        // is passed unretained: libpq calls the receiver only inside calls made on this live connection.
        PQsetNoticeReceiver(handle, Connection.noticeReceiver, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Ignores notices, except a FATAL error, which means the server is closing the connection.
    private static let noticeReceiver: PQnoticeReceiver = { context, result in
        guard let context, let result,
            let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))),
            String(cString: severity) == "FATAL"
        else { return }
        let message = String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines()
        Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue().unusableReason =
            "the server ended the session: \(message)"
    }

    /// Parses `conninfo` and connects.
    ///
    /// - Throws: ``LibPQError`` `.invalidConnectionString` or `.connectionFailed`.
    package convenience init(_ conninfo: String) throws {
        try self.init(ConnectionConfiguration(conninfo))
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Whether the connection is closed or its server connection is gone (`PQstatus == CONNECTION_BAD`).
    ///
    /// This only reports what libpq already knows; it does not look at the socket. ``isUsable`` does, and
    /// once ``isUsable`` returned `false`, `isBroken` is `true` until ``reset()``.
    package var isBroken: Bool {
        guard let handle else { return true }
        return PQstatus(handle) == CONNECTION_BAD || unusableReason != nil
    }

    /// Whether the connection can still run statements, checked without blocking.
    ///
    /// Reads and parses whatever already waits on the socket (`PQconsumeInput`), so a server that closed
    /// the connection or sent a FATAL error (for example after `pg_terminate_backend` or a shutdown) is noticed
    /// without running a query first. Returns `false` when the connection is closed, when libpq reports
    /// `CONNECTION_BAD`, or when reading fails; ``isBroken`` is then `true` as well. A pool can call it
    /// before handing a connection out:
    /// ```swift
    /// if !connection.isUsable { try connection.reset() }
    /// ```
    /// Notifications that arrived are kept for ``waitForNotifications(timeout:)``.
    package var isUsable: Bool {
        guard let handle, unusableReason == nil, PQstatus(handle) == CONNECTION_OK else { return false }
        // Twice at most: a FATAL message can be read while the EOF behind it only shows on the next read. An
        // idle connection with nothing waiting (the usual case) costs one poll(2) and no read.
        for _ in 0..<2 {
            guard (try? waitForSocket(handle, timeoutMilliseconds: 0)) ?? true else { break }
            guard PQconsumeInput(handle) == 1 else {
                if PQstatus(handle) == CONNECTION_OK {
                    unusableReason = "reading from the socket failed: \(errorMessage(handle))"
                }
                return false
            }
            // Parse what arrived: a FATAL error sent while idle reaches the notice receiver.
            _ = PQisBusy(handle)
            guard PQstatus(handle) == CONNECTION_OK, unusableReason == nil else { return false }
        }
        return true
    }

    /// The transaction state (`PQtransactionStatus`); `.unknown` when closed or broken.
    package var transactionStatus: TransactionStatus {
        guard let handle else { return .unknown }
        if pendingBegin != nil { return .inTransaction }
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE: return .idle
        case PQTRANS_ACTIVE: return .active
        case PQTRANS_INTRANS: return .inTransaction
        case PQTRANS_INERROR: return .inError
        default: return .unknown
        }
    }

    /// The backend serving this session as `pg_stat_activity` names it (process ID and start time, as text),
    /// once ``learnBackendIdentity()`` found it; `nil` otherwise, and always behind a pooler, whose process ID
    /// is its own (so that a caller ending a backend by this identity can never end another client's).
    package var backendIdentity: (pid: Int32, start: String)? {
        backendStart.map { (backendPID, $0) }
    }

    /// Asks the server for this session's backend start time, one round trip, and keeps it when the
    /// backend's process ID is the one the connection was told at login (not behind a pooler). Errors are
    /// ignored: the identity stays unknown.
    package func learnBackendIdentity() {
        let sql = "SELECT pg_backend_pid(), backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        guard let result = try? query(sql), result.rowCount == 1,
            let pid = try? result.decode(Int32.self, row: 0, column: 0), pid == backendPID,
            let start = try? result.decode(String.self, row: 0, column: 1)
        else { return }
        backendStart = start
    }

    /// The process ID of the server backend serving this connection; 0 when closed.
    package var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// The server's version as an integer, e.g. 150004 for 15.4; 0 when closed or broken.
    package var serverVersion: Int {
        guard let handle else { return 0 }
        return Int(PQserverVersion(handle))
    }

    /// Reconnects with the same parameters (`PQreset`); prepared statements and session state are gone.
    ///
    /// - Throws: ``LibPQError`` `.connectionClosed` after ``close()``, `.connectionFailed` when reconnecting
    ///   fails.
    package func reset() throws {
        let handle = try requireHandle()
        preparedStatements = [:]
        statementCache.removeAll()
        unusableReason = nil
        backendStart = nil
        canceller = nil
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw LibPQError(connectionFailed: errorMessage(handle), context: "could not reconnect")
        }
        connectedAt = .now
    }

    /// Closes the connection (`PQfinish`); calling it again does nothing.
    ///
    /// Every later call throws ``LibPQError`` `.connectionClosed`.
    package func close() {
        guard let handle else { return }
        self.handle = nil
        preparedStatements = [:]
        statementCache.removeAll()
        canceller = nil
        PQfinish(handle)
    }

    // MARK: - Internals shared by the extensions

    /// The open handle, or the error for a closed connection.
    func requireHandle() throws -> OpaquePointer {
        guard let handle else { throw LibPQError(.connectionClosed, "the connection was closed") }
        return handle
    }

    /// libpq's last error message for the connection, without its trailing newline.
    func errorMessage(_ handle: OpaquePointer) -> String {
        String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
    }

    /// The error for a libpq call that failed without a server error: lost connection or a protocol problem.
    func clientError(_ handle: OpaquePointer, _ what: String) -> LibPQError {
        if PQstatus(handle) == CONNECTION_BAD {
            return LibPQError(.connectionLost, "connection lost during \(what): \(errorMessage(handle))")
        }
        if let lost = lostConnection(handle, "during \(what): \(errorMessage(handle))") { return lost }
        return LibPQError(.protocolViolation, "\(what) failed: \(errorMessage(handle))")
    }
}

/// A connection is used by one thread at a time; share a pool (or a store), not a connection.
@available(*, unavailable)
extension Connection: Sendable {}
