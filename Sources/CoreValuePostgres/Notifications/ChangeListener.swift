@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Receives the changes other contexts and processes commit through stores opened with the same
/// `notificationChannel`.
///
/// A listener owns one connection of its own, outside the store's pool (so it also works when the pool goes
/// through pgbouncer in transaction mode, as long as the listener's URL reaches PostgreSQL directly). It is
/// used by one thread at a time; give each listening thread its own.
///
/// ```swift
/// let store = try PostgresStore(url: url, model: model, notificationChannel: "app_changes")
/// let listener = try store.makeChangeListener()
/// for change in try listener.next(timeout: .seconds(5)) {
///     print(change.entityName, change.inserted, change.updated, change.deleted)
/// }
/// ```
public final class ChangeListener {
    /// The channel listened on.
    public let channel: String
    private let connection: Connection

    /// Connects and starts listening on `channel`.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidConfiguration`` for an empty channel or one over 63 bytes;
    ///   the driver's connection errors.
    public init(configuration: ConnectionConfiguration, channel: String) throws {
        try ChangeListener.validate(channel: channel)
        self.channel = channel
        self.connection = try Connection(configuration)
        do {
            try connection.listen(channel)
        } catch {
            connection.close()
            throw error
        }
    }

    /// Checks a channel name: non-empty and at most 63 bytes (PostgreSQL's identifier limit).
    static func validate(channel: String) throws {
        guard !channel.isEmpty, channel.utf8.count <= SchemaMapping.maximumIdentifierLength,
            !channel.utf8.contains(0)
        else {
            throw PostgresStoreError(
                .invalidConfiguration, "notification channel must be 1 to 63 bytes without NUL: '\(channel)'")
        }
    }

    /// The changes committed since the last call, waiting up to `timeout` for the first one; empty when none
    /// arrived in time.
    ///
    /// - Throws: The driver's errors when the connection is lost (then ``isUsable`` is `false`; make a new
    ///   listener); ``PostgresStoreError/Code/unexpectedResult`` for a payload that is not a store's.
    public func next(timeout: Duration) throws -> [StoreChange] {
        let notifications = try connection.waitForNotifications(timeout: timeout)
        return try notifications.filter { $0.channel == channel }.flatMap { notification in
            do {
                return try ChangePayload.changes(from: notification.payload, pid: notification.pid)
            } catch {
                throw PostgresStoreError(
                    .unexpectedResult, "notification on '\(channel)' is not a store change: \(error)")
            }
        }
    }

    /// Whether the connection still works.
    public var isUsable: Bool { connection.isUsable }

    /// Stops listening and closes the connection; later calls throw.
    public func close() {
        connection.close()
    }

    deinit {
        connection.close()
    }
}

@available(*, unavailable, message: "a listener owns one connection; give each thread its own")
extension ChangeListener: Sendable {}
