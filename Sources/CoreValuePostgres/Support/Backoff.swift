/// How long to wait before the next attempt of something that failed for a passing reason: exponential from
/// `first`, at most `cap`, spread by `jitter` so that competing clients drift apart.
///
/// The one schedule of the store's retries (``PostgresStore/withRetries(mayRetry:_:)``) and of a
/// ``ChangeListener``'s reconnects, so that a store and its listener back off alike during an outage.
struct Backoff: Sendable {
    /// The pause after the first failed attempt that waits at all.
    var first: Duration
    /// The longest pause.
    var cap: Duration
    /// The pause is multiplied by a random factor in `1 - jitter ... 1 + jitter` (0: none).
    var jitter: Double

    /// Serialization failures and deadlocks: 5 ms, 10 ms, 20 ms ... at most 200 ms, widely spread, since
    /// the writers that collided are likely to collide again if they retry together.
    static let conflict = Backoff(first: .milliseconds(5), cap: .milliseconds(200), jitter: 0.5)

    /// A server that is gone or not ready (a restart, a failover): 50 ms, 100 ms ... at most 1 s, the time a
    /// promote or a restart takes, without hammering a server that is starting.
    static let outage = Backoff(first: .milliseconds(50), cap: .seconds(1), jitter: 0.25)

    /// The pause before attempt `retry + 1`, where `retry` counts the waits so far from 1 (`first` for 1,
    /// twice that for 2, ...). The exponent is bounded, so no count overflows.
    func pause(afterRetry retry: Int) -> Duration {
        let doubled = first * (1 << min(max(retry - 1, 0), 20))
        let step = min(doubled, cap)
        guard jitter > 0 else { return step }
        return step * Double.random(in: (1 - jitter)...(1 + jitter))
    }
}
