/// An error raised by the driver itself rather than by the server.
///
/// Switch on ``code`` to react; new codes may be added without breaking existing `switch` statements
/// because `Code` is a struct, not an enum. The ``message`` says what went wrong in words a user can act on.
public struct LibPQError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Hashable, Sendable {
            case invalidConnectionString, connectionFailed, connectionClosed, connectionLost
            case commitOutcomeUnknown, encoding, decoding, copyFailed, pipelineFailed
            case protocolViolation, transactionAborted, transactionEndedEarly, cancelFailed
        }

        private let kind: Kind

        private init(_ kind: Kind) { self.kind = kind }

        /// The connection string could not be parsed by libpq.
        public static let invalidConnectionString = Code(.invalidConnectionString)
        /// The server could not be reached or refused the connection.
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection was closed by ``Connection/close()`` before this call.
        public static let connectionClosed = Code(.connectionClosed)
        /// The connection broke during the call (``Connection/isBroken`` is now `true`).
        public static let connectionLost = Code(.connectionLost)
        /// The connection broke while COMMIT was in flight: the transaction may or may not have committed.
        public static let commitOutcomeUnknown = Code(.commitOutcomeUnknown)
        /// A Swift value could not be written in PostgreSQL's binary format.
        public static let encoding = Code(.encoding)
        /// A result cell could not be read as the requested Swift type.
        public static let decoding = Code(.decoding)
        /// A COPY could not be started, fed or finished.
        public static let copyFailed = Code(.copyFailed)
        /// Pipeline mode could not be entered, fed or left.
        public static let pipelineFailed = Code(.pipelineFailed)
        /// The server answered with something this call did not expect.
        public static let protocolViolation = Code(.protocolViolation)
        /// A transaction failed earlier (its body swallowed an error) and was rolled back instead of committed.
        public static let transactionAborted = Code(.transactionAborted)
        /// The body of ``Connection/withTransaction(isolation:readOnly:_:)`` ran COMMIT or ROLLBACK itself, so
        /// there was no transaction left to commit; what that statement did stands.
        public static let transactionEndedEarly = Code(.transactionEndedEarly)
        /// A cancel request could not be delivered.
        public static let cancelFailed = Code(.cancelFailed)

        /// The code's name, e.g. `connectionLost`.
        public var description: String { kind.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, including libpq's own message where there is one.
    public var message: String

    /// For ``Code/connectionFailed``: libpq's own words, without the description of the connection string
    /// that ``message`` adds for the reader. A refusal is read from these alone: the description's keywords
    /// (`sslmode=verify-full`, `password=********`) are no server's words. `nil` for other errors.
    package var libpqMessage: String?

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A failed connection: `context` (what was connected to) and libpq's message, kept apart as well
    /// (``libpqMessage``).
    package init(connectionFailed libpqMessage: String, context: String) {
        self.init(.connectionFailed, "\(context): \(libpqMessage)")
        self.libpqMessage = libpqMessage
    }

    /// `"<code>: <message>"`.
    public var description: String { "\(code): \(message)" }
}
