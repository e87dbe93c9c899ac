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
    /// Every transaction this snapshot shows and numbered up to ``baseNumber`` has been read.
    @_spi(StoreImplementation) public let base: HistorySnapshot
    /// The highest number of a transaction ``base`` shows. A transaction ``base`` shows numbered above it
    /// has not been read: after a failover, a transaction ID that had ended unrecorded on the old primary
    /// (one that rolled back, its abort never replicated) can be taken again by a new transaction on the
    /// new one, which then takes a higher number than anything the old primary's readers saw.
    @_spi(StoreImplementation) public let baseNumber: Int64
    /// The batch being read: transactions this snapshot shows and that were not read, in number order.
    @_spi(StoreImplementation) public let batch: HistorySnapshot
    /// Of ``batch``, the transactions numbered up to this one have been read.
    @_spi(StoreImplementation) public let after: Int64

    /// A token that has read everything `base` shows, numbered up to `number`.
    @_spi(StoreImplementation) public init(storeID: String, base: HistorySnapshot, number: Int64) {
        self.init(storeID: storeID, base: base, baseNumber: number, batch: base, after: number)
    }

    /// A token part way through the batch between `base` and `batch`.
    @_spi(StoreImplementation) public init(
        storeID: String, base: HistorySnapshot, baseNumber: Int64, batch: HistorySnapshot, after: Int64
    ) {
        self.storeID = storeID
        self.base = base
        self.baseNumber = baseNumber
        self.batch = batch
        self.after = after
    }

    /// Whether a transaction with ID `xid` and number `number` that ``batch`` shows is still to be read as
    /// part of it (numbered past ``after``, and not read with ``base``).
    @_spi(StoreImplementation) public func isRestOfBatch(xid: UInt64, number: Int64) -> Bool {
        number > after && batch.shows(xid) && !(base.shows(xid) && number <= baseNumber)
    }

    /// Whether `lhs` stands before `rhs` (tokens of one store, in the order one reader reads them).
    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool {
        lhs.storeID != rhs.storeID ? lhs.storeID < rhs.storeID : lhs.order.lexicographicallyPrecedes(rhs.order)
    }

    private var order: [Int64] {
        [
            Int64(truncatingIfNeeded: base.xmax), Int64(truncatingIfNeeded: base.xmin), -Int64(base.inProgress.count),
            baseNumber, Int64(truncatingIfNeeded: batch.xmax), Int64(truncatingIfNeeded: batch.xmin), after,
        ]
    }

    /// The token's snapshots, for logs.
    public var description: String {
        "HistoryToken(\(base.text) #\(baseNumber)" + (batch == base ? "" : " -> \(batch.text) after #\(after)") + ")"
    }
}
