@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

/// Receives the changes other contexts and processes commit through stores opened with the same
/// `notificationChannel`.
///
/// A listener owns one connection of its own, outside the store's pool (so it also works when the pool goes
/// through pgbouncer in transaction mode, as long as the listener reaches PostgreSQL directly: see
/// ``PostgresStore/Configuration/listenConnection``). It is used by one thread at a time; give each listening
/// thread its own.
///
/// When its connection is lost (a restart, a failover), the listener connects again by itself, with backoff,
/// and listens again. PostgreSQL does not keep notifications for a session that is gone, so the changes
/// committed in between are not heard: ``events(timeout:)`` reports that gap as
/// ``Event/mayHaveMissedChanges(_:)`` right after reconnecting, and ``next(timeout:)`` throws
/// ``PostgresStoreError/Code/changesMayHaveBeenMissed`` once. Reload what you cache when you see either.
///
/// ```swift
/// let listener = try store.makeChangeListener()
/// for event in try listener.events(timeout: .seconds(5)) {
///     switch event {
///     case .change(let change): print(change.entityName, change.inserted, change.updated, change.deleted)
///     case .mayHaveMissedChanges(let gap): print("reload the cache:", gap.reason)
///     }
/// }
/// ```
public final class ChangeListener {
    /// What ``events(timeout:)`` delivers.
    public enum Event: Sendable, Hashable {
        /// A committed save's changes to one entity.
        case change(StoreChange)
        /// The connection was lost and the listener listens again on a new one: changes committed while it
        /// was away were not heard. Reload (or drop) whatever you cache from the store.
        case mayHaveMissedChanges(Gap)
    }

    /// A time the listener was not listening.
    public struct Gap: Sendable, Hashable {
        /// When the listener found its connection lost.
        public var lostAt: Date
        /// When it listened again.
        public var resumedAt: Date
        /// How many connection attempts it took.
        public var attempts: Int
        /// Why the connection was lost (the driver's error).
        public var reason: String
    }

    /// The channel listened on.
    public let channel: String
    private let configuration: ConnectionConfiguration
    private var connection: Connection?
    /// When the connection was found lost, why, how many reconnects were tried since, and when the next may be.
    private var outage: (lostAt: Date, reason: String, attempts: Int, nextAttempt: ContinuousClock.Instant)?
    /// Why the last attempt to connect and listen again failed; `nil` while listening.
    public private(set) var lastReconnectError: (any Error)?
    private var closed = false

    /// Connects and starts listening on `channel`.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidConfiguration`` for an empty channel or one over 63 bytes;
    ///   the driver's connection errors (the first connection is not retried).
    public init(configuration: ConnectionConfiguration, channel: String) throws {
        try ChangeListener.validate(channel: channel)
        self.channel = channel
        self.configuration = configuration
        self.connection = try Self.connect(configuration, channel: channel)
    }

    /// A connection listening on `channel`.
    private static func connect(_ configuration: ConnectionConfiguration, channel: String) throws -> Connection {
        let connection = try Connection(configuration)
        do {
            try connection.listen(channel)
        } catch {
            connection.close()
            throw error
        }
        return connection
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
    /// When the connection is lost, the listener connects again (retrying with backoff, 50 ms doubling to
    /// 1 s, kept across calls, for as long as `timeout` allows and again on the next call) and, once it
    /// listens again, returns ``Event/mayHaveMissedChanges(_:)``. Changes that arrived before the connection
    /// broke are returned first. One connection attempt may take longer than `timeout` (libpq's
    /// `connect_timeout` bounds it); ``lastReconnectError`` says why the last attempt failed.
    ///
    /// - Throws: `LibPQError(.connectionClosed)` after ``close()``; ``PostgresStoreError/Code/unexpectedResult``
    ///   for a payload that is not a store's.
    public func events(timeout: Duration) throws -> [Event] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: min(timeout, .seconds(Int64(100 * 366 * 86_400))))
        while true {
            guard !closed else { throw LibPQError(.connectionClosed, "the listener was closed") }
            if let connection, outage == nil {
                do {
                    let remaining = max(.zero, clock.now.duration(to: deadline))
                    return try changes(in: connection.waitForNotifications(timeout: remaining)).map(Event.change)
                } catch let error as LibPQError where error.code == .connectionLost {
                    connection.close()
                    self.connection = nil
                    outage = (Date(), error.message, 0, clock.now)
                }
            }
            // The backoff holds across calls: a caller polling with short timeouts does not reconnect faster.
            let next = outage?.nextAttempt ?? clock.now
            if next > deadline { return [] }
            if next > clock.now { Thread.sleep(forTimeInterval: clock.now.duration(to: next).timeInterval) }
            if let gap = reconnect() { return [.mayHaveMissedChanges(gap)] }
            if clock.now >= deadline { return [] }
        }
    }

    /// The changes committed since the last call, waiting up to `timeout` for the first one; empty when none
    /// arrived in time. Reconnects as ``events(timeout:)`` does.
    ///
    /// - Throws: ``PostgresStoreError/Code/changesMayHaveBeenMissed`` once after each reconnect (the listener
    ///   listens again; call again for the changes that follow); `LibPQError(.connectionClosed)` after
    ///   ``close()``; ``PostgresStoreError/Code/unexpectedResult`` for a payload that is not a store's.
    public func next(timeout: Duration) throws -> [StoreChange] {
        var changes: [StoreChange] = []
        for event in try events(timeout: timeout) {
            switch event {
            case .change(let change):
                changes.append(change)
            case .mayHaveMissedChanges(let gap):
                throw PostgresStoreError(
                    .changesMayHaveBeenMissed,
                    "the listener on '\(channel)' lost its connection (\(gap.reason)) and listens again after "
                        + "\(gap.attempts) attempts; changes committed meanwhile were not heard")
            }
        }
        return changes
    }

    /// One attempt to connect and listen again; the gap when it worked. A failure sets the next attempt after
    /// the store's outage backoff (`Backoff.outage`: 50 ms, doubling to 1 s, with jitter).
    private func reconnect() -> Gap? {
        let now = ContinuousClock.now
        let lost = outage ?? (Date(), "the connection was not usable", 0, now)
        let attempts = lost.attempts + 1
        do {
            connection = try Self.connect(configuration, channel: channel)
            outage = nil
            lastReconnectError = nil
            return Gap(lostAt: lost.lostAt, resumedAt: Date(), attempts: attempts, reason: lost.reason)
        } catch {
            lastReconnectError = error
            outage = (lost.lostAt, lost.reason, attempts, now + Backoff.outage.pause(afterRetry: attempts))
            return nil
        }
    }

    private func changes(in notifications: [LibPQ.Notification]) throws -> [StoreChange] {
        try notifications.filter { $0.channel == channel }.flatMap { notification in
            do {
                return try ChangePayload.changes(from: notification.payload, pid: notification.pid)
            } catch {
                throw PostgresStoreError(
                    .unexpectedResult, "notification on '\(channel)' is not a store change: \(error)")
            }
        }
    }

    /// Whether the listener is listening now: `false` while it is reconnecting, and after ``close()``.
    public var isUsable: Bool { !closed && outage == nil && connection?.isUsable == true }

    /// Stops listening and closes the connection; later calls throw.
    public func close() {
        closed = true
        connection?.close()
        connection = nil
    }

    deinit {
        connection?.close()
    }
}

@available(*, unavailable, message: "a listener owns one connection; give each thread its own")
extension ChangeListener: Sendable {}
