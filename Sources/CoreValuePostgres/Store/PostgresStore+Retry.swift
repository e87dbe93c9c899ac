import Foundation
import LibPQ

extension PostgresStore {
    /// Runs `body`, repeating it after a serialization failure (40001), a deadlock (40P01) or a connection
    /// lost before `COMMIT` was sent, with bounded exponential backoff.
    ///
    /// `body` is one whole transaction (or one statement outside a transaction), which the server rolled back
    /// in each of these cases, so repeating it is safe. A commit whose outcome is unknown
    /// (`LibPQError(.commitOutcomeUnknown)`) is never repeated, nor is anything once `mayRetry` says no (a
    /// stream that handed out a batch).
    func withRetries<T>(mayRetry: () -> Bool = { true }, _ body: () throws -> T) throws -> T {
        var attempt = 1
        while true {
            do {
                return try body()
            } catch  where attempt < maxAttempts && Self.isRetryable(error) && mayRetry() {
                counter.record { $0.retries += 1 }
                // 5 ms, 10 ms, 20 ms ... at most 200 ms, with jitter so competing writers drift apart.
                let base = min(0.2, 0.005 * Double(1 << min(attempt - 1, 6)))
                let pause = base * Double.random(in: 0.5...1.5)
                events.send(StoreEvent(kind: .retry, duration: .seconds(pause), attempt: attempt, error: error))
                Thread.sleep(forTimeInterval: pause)
                attempt += 1
            }
        }
    }

    /// Whether an error means the transaction was rolled back and may simply be run again.
    static func isRetryable(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.sqlState.isRetryableTransactionError }
        if let error = error as? LibPQError { return error.code == .connectionLost }
        return false
    }
}
