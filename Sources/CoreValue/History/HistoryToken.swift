/// Where a reader of a store's history stands: every transaction up to it has been read. Hand it to
/// ``HistoryStore/history(after:limit:)`` to read what committed since.
///
/// Tokens are plain values: keep one in a file or a row (`Codable`), send it to another process (`Sendable`);
/// it stays valid across restarts of the reader and of the server, and across a failover to a synchronous
/// standby. A token names the store's history it came from: another database's or schema's store refuses it
/// with ``CVManagedStructError/Code/historyUnavailable``. Tokens of one reader compare in the order it read
/// them.
public struct HistoryToken: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The history this token belongs to: a random identifier made when the store's history tables were.
    public let storeID: String
    /// Every transaction this snapshot shows has been read.
    @_spi(StoreImplementation) public let base: HistorySnapshot
    /// The batch being read: transactions this snapshot shows and ``base`` doesn't, in transaction-number order.
    @_spi(StoreImplementation) public let batch: HistorySnapshot
    /// Of ``batch``, the transactions numbered up to this one have been read.
    @_spi(StoreImplementation) public let after: Int64

    /// A token that has read everything `base` shows.
    @_spi(StoreImplementation) public init(storeID: String, base: HistorySnapshot) {
        self.init(storeID: storeID, base: base, batch: base, after: .max)
    }

    /// A token part way through the batch between `base` and `batch`.
    @_spi(StoreImplementation) public init(storeID: String, base: HistorySnapshot, batch: HistorySnapshot, after: Int64)
    {
        self.storeID = storeID
        self.base = base
        self.batch = batch
        self.after = after
    }

    /// Whether a transaction numbered `xid`, the `number`th recorded, has been read.
    @_spi(StoreImplementation) public func hasRead(xid: UInt64, number: Int64) -> Bool {
        base.shows(xid) || (batch.shows(xid) && number <= after)
    }

    /// Whether `lhs` stands before `rhs` (tokens of one store, in the order one reader reads them).
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        lhs.storeID != rhs.storeID ? lhs.storeID < rhs.storeID : lhs.order < rhs.order
    }

    private var order: (UInt64, UInt64, Int, UInt64, UInt64, Int64) {
        (base.xmax, base.xmin, -base.inProgress.count, batch.xmax, batch.xmin, after)
    }

    /// The token's snapshots, for logs.
    public var description: String {
        "HistoryToken(\(base.text)" + (batch == base ? "" : " -> \(batch.text) after \(after)") + ")"
    }
}
