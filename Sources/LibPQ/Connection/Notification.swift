/// A message received on a channel the connection listens to (`LISTEN` / `NOTIFY`).
package struct Notification: Sendable, Hashable {
    /// The channel name.
    package var channel: String
    /// The payload; empty when the sender gave none.
    package var payload: String
    /// The process ID of the sending server backend.
    package var pid: Int32

    /// Creates a notification value.
    package init(channel: String, payload: String, pid: Int32) {
        self.channel = channel
        self.payload = payload
        self.pid = pid
    }
}
