import Foundation
import LibPQ

extension PostgresStore {
    /// Runs `body`, repeating it after a serialization failure (40001) or deadlock (40P01), with bounded
    /// exponential backoff. Only whole transactions that the server rolled back are repeated; a commit whose
    /// outcome is unknown is never retried.
    func withRetries<T>(_ body: () throws -> T) throws -> T {
        var attempt = 1
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.sqlState.isRetryableTransactionError && attempt < maxAttempts {
                counter.record { $0.retries += 1 }
                // 5 ms, 10 ms, 20 ms ... at most 200 ms, with jitter so competing writers drift apart.
                let base = min(0.2, 0.005 * Double(1 << min(attempt - 1, 6)))
                Thread.sleep(forTimeInterval: base * Double.random(in: 0.5...1.5))
                attempt += 1
            }
        }
    }
}
