/// Which transactions a reader of history had seen: PostgreSQL's snapshot form (`pg_snapshot`), which a
/// ``HistoryToken`` carries. Every transaction numbered below ``xmin`` had ended; of those from ``xmin`` up to
/// ``xmax``, all but ``inProgress`` had ended; none from ``xmax`` on had. A transaction that had ended and
/// committed is visible in the snapshot.
///
/// A snapshot is a consistent cut of commit order: a transaction that committed before one it shows is shown
/// too. That is why history is read by snapshots rather than by a sequence number taken inside each
/// transaction (see the Concurrency article's "History" section).
@_spi(StoreImplementation) public struct HistorySnapshot: Sendable, Hashable, Codable {
    /// The lowest transaction number that was still running (or ``xmax`` when none was).
    public var xmin: UInt64
    /// One past the highest transaction number that had ended.
    public var xmax: UInt64
    /// Transaction numbers from ``xmin`` up to ``xmax`` that were still running, ascending.
    public var inProgress: [UInt64]

    /// Creates a snapshot.
    public init(xmin: UInt64, xmax: UInt64, inProgress: [UInt64] = []) {
        self.xmin = xmin
        self.xmax = xmax
        self.inProgress = inProgress.sorted()
    }

    private enum CodingKeys: String, CodingKey {
        case xmin, xmax, inProgress
    }

    /// Decodes a snapshot, refusing one PostgreSQL could not have taken (a token edited or corrupted on its
    /// way): `xmin` above `xmax`, or a running transaction outside `xmin..<xmax` or listed twice.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let xmin = try container.decode(UInt64.self, forKey: .xmin)
        let xmax = try container.decode(UInt64.self, forKey: .xmax)
        let running = try container.decode([UInt64].self, forKey: .inProgress)
        guard xmin <= xmax, running.allSatisfy({ $0 >= xmin && $0 < xmax }), Set(running).count == running.count
        else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "not a snapshot: xmin \(xmin), xmax \(xmax), running \(running)"))
        }
        self.init(xmin: xmin, xmax: xmax, inProgress: running)
    }

    /// The snapshot that shows nothing: the start of history.
    public static let origin = HistorySnapshot(xmin: 1, xmax: 1)

    /// Whether transaction `xid` had ended when the snapshot was taken (it is visible if it committed).
    public func shows(_ xid: UInt64) -> Bool {
        xid < xmin || (xid < xmax && !contains(xid))
    }

    /// Whether every transaction this snapshot shows is shown by `other` as well: `other` was taken later, or
    /// is this one.
    public func isCovered(by other: HistorySnapshot) -> Bool {
        guard xmax <= other.xmax else { return false }
        // What `other` still saw running below this snapshot's horizon must have been running here too.
        return other.inProgress.allSatisfy { $0 >= xmax || contains($0) }
    }

    /// This snapshot showing only transactions numbered below `xid`: what ended before it was taken and
    /// started before `xid`. Transactions still running stay unshown, whatever their numbers.
    public func truncated(below xid: UInt64) -> HistorySnapshot {
        let top = Swift.min(xmax, xid)
        return HistorySnapshot(xmin: Swift.min(xmin, top), xmax: top, inProgress: inProgress.filter { $0 < top })
    }

    private func contains(_ xid: UInt64) -> Bool {
        var low = 0
        var high = inProgress.count
        while low < high {
            let middle = (low + high) / 2
            if inProgress[middle] < xid { low = middle + 1 } else { high = middle }
        }
        return low < inProgress.count && inProgress[low] == xid
    }

    /// PostgreSQL's text form, `xmin:xmax:xip,xip`.
    public var text: String {
        "\(xmin):\(xmax):" + inProgress.map(String.init).joined(separator: ",")
    }

    /// Parses PostgreSQL's text form; `nil` when `text` is not one.
    public init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]), xmin <= xmax else {
            return nil
        }
        var running: [UInt64] = []
        for item in parts[2].split(separator: ",") {
            guard let xid = UInt64(item), xid >= xmin, xid < xmax else { return nil }
            running.append(xid)
        }
        self.init(xmin: xmin, xmax: xmax, inProgress: running)
    }
}
