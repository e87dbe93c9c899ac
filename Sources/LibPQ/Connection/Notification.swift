/// A message received on a channel the connection listens to (`LISTEN` / `NOTIFY`).
public struct Notification: Sendable, Hashable {
    /// The channel name.
    public var channel: String
    /// The payload; empty when the sender gave none.
    public var payload: String
    /// The process ID of the sending server backend.
    public var pid: Int32

    /// Creates a notification value.
    public init(channel: String, payload: String, pid: Int32) {
        self.channel = channel
        self.payload = payload
        self.pid = pid
    }
}
