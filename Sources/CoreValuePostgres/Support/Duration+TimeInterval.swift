import Foundation

extension Duration {
    /// The duration in seconds, for `Thread.sleep`, `Date` arithmetic and messages.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
