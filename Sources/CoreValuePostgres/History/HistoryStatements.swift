@_spi(StoreImplementation) import CoreValue
import Foundation

/// The statements of a store's history: recording a save, reading after a token, pruning.
struct HistoryStatements {
    let schema: String?

    private var history: SQLIdentifier { SQLIdentifier(SchemaMapping.historyTable, schema: schema) }
    private var state: SQLIdentifier { SQLIdentifier(SchemaMapping.historyStateTable, schema: schema) }

    /// The statement that records one transaction: the save's last before `COMMIT`, so that its number (the
    /// identity `"_pk"`) is taken after every row lock the save waited for.
    func record(_ record: HistoryRecord) -> SQL {
        "INSERT INTO \(history) (author, name, entities, kinds, keys, versions, changed, tombstones) VALUES ("
            + "\(bind: record.author.map { .text($0) } ?? .scalar(.string, .null)), "
            + "\(bind: record.name.map { .text($0) } ?? .scalar(.string, .null)), "
            + "\(typedBind: .array(.string, record.entities.map { .string($0) })), \(bind: .text(record.kinds)), "
            + "\(typedBind: .int64Array(record.keys)), \(typedBind: .optionalInt64Array(record.versions)), "
            + "\(typedBind: .array(.string, record.changed.map { .string($0) })), "
            + "\(bind: record.tombstones.map { .text($0) } ?? .scalar(.string, .null)))"
    }

    /// The unique and preserved attributes of rows about to be deleted, locked so that they are what the
    /// delete removes: `"_pk"`, then `attributes` in order.
    func tombstones(of entity: String, attributes: [String], keys: [Int64]) -> SQL {
        let columns = SQL.joined(attributes.map { "\(SQLIdentifier($0))" }, separator: ", ")
        return "SELECT \(SQLIdentifier(SchemaMapping.primaryKeyColumn)), \(columns) FROM "
            + "\(SQLIdentifier(entity, schema: schema)) WHERE \(SQLIdentifier(SchemaMapping.primaryKeyColumn)) = "
            + "ANY(\(typedBind: .int64Array(keys))) FOR UPDATE"
    }

    /// The history's identifier, what was pruned, and the statement's snapshot (the "now" of a token).
    var current: SQL {
        "SELECT store_id::text, pruned, pg_current_snapshot()::text FROM \(state) ORDER BY \"_pk\" LIMIT 1"
    }

    /// Up to `limit` transactions after `token`, in one statement and so one snapshot: the state row's
    /// columns (as ``current``) on every row, then for each transaction `"_pk"`, `xid`, `committed_at`,
    /// `author`, `name`, `entities`, `kinds`, `keys`, `changed`, `tombstones` and whether it belongs to the
    /// token's batch; the batch's rest first, then the new batch, each in number order. With no transaction
    /// to read, one row of the state's columns and nulls.
    func read(after token: HistoryToken, limit: Int) -> SQL {
        let columns: SQL =
            "\"_pk\", xid, committed_at, author, name, entities, kinds, keys, changed, tombstones, versions"
        let base = SQLBind.text(token.base.text)
        let batch = SQLBind.text(token.batch.text)
        let rest: SQL =
            "SELECT \(columns), true AS in_batch FROM \(history) WHERE \"_pk\" > \(bind: .int64(token.after)) "
            + "AND xid >= \(bind: .text(String(token.base.xmin)))::xid8 "
            + "AND pg_visible_in_snapshot(xid, \(bind: batch)::pg_snapshot) "
            + "AND NOT pg_visible_in_snapshot(xid, \(bind: base)::pg_snapshot) "
            + "ORDER BY \"_pk\" LIMIT \(bind: .int64(Int64(limit)))"
        let new: SQL =
            "SELECT \(columns), false FROM \(history) WHERE xid >= \(bind: .text(String(token.batch.xmin)))::xid8 "
            + "AND NOT pg_visible_in_snapshot(xid, \(bind: batch)::pg_snapshot) "
            + "ORDER BY \"_pk\" LIMIT \(bind: .int64(Int64(limit)))"
        return "SELECT s.store_id::text, s.pruned, pg_current_snapshot()::text, h.\"_pk\", h.xid::text, "
            + "h.committed_at, h.author, h.name, h.entities, h.kinds, h.keys, h.changed, h.tombstones, h.in_batch, h.versions "
            + "FROM (SELECT store_id, pruned FROM \(state) ORDER BY \"_pk\" LIMIT 1) s "
            + "LEFT JOIN LATERAL ((\(rest)) UNION ALL (\(new))) h ON true "
            + "ORDER BY h.in_batch DESC, h.\"_pk\" LIMIT \(bind: .int64(Int64(limit)))"
    }

    /// The state row, locked for a prune: identifier and what was pruned.
    var lockState: SQL { "SELECT store_id::text, pruned FROM \(state) ORDER BY \"_pk\" LIMIT 1 FOR UPDATE" }

    /// The horizon below which every transaction was recorded before `date` and has ended: the oldest
    /// transaction still running, or the first recorded at or after `date`, whichever is lower.
    func horizon(before date: Date) -> SQL {
        "SELECT least(pg_snapshot_xmin(pg_current_snapshot()), (SELECT min(xid) FROM \(history) "
            + "WHERE committed_at >= \(bind: .scalar(.date, .date(date)))))::text"
    }

    /// Deletes what `snapshot` shows, and records it as pruned.
    func prune(upTo snapshot: HistorySnapshot) -> [SQL] {
        [
            "DELETE FROM \(history) WHERE xid < \(bind: .text(String(snapshot.xmax)))::xid8 "
                + "AND pg_visible_in_snapshot(xid, \(bind: .text(snapshot.text))::pg_snapshot)",
            "UPDATE \(state) SET pruned = \(bind: .text(snapshot.text))",
        ]
    }
}

/// One transaction's row of the history table, as recorded.
struct HistoryRecord {
    var author: String?
    var name: String?
    var entities: [String] = []
    /// One letter per change: `i`nsert, `u`pdate, `d`elete.
    var kinds = ""
    var keys: [Int64] = []
    var versions: [Int64?] = []
    /// Per change, the updated property names joined by commas.
    var changed: [String] = []
    /// The deletes' tombstones (``TombstoneCoding``), or `nil` when none has one.
    var tombstones: String?

    init(author: String?, name: String?, changes: [HistoryChange]) {
        self.author = author
        self.name = name
        var stones: [Int: [String: AttributeValue]] = [:]
        for (position, change) in changes.enumerated() {
            entities.append(change.entityName)
            kinds.append(change.kind.letter)
            keys.append(change.objectID.primaryKey ?? 0)
            versions.append(change.version)
            changed.append(change.updatedProperties.joined(separator: ","))
            if !change.tombstone.isEmpty { stones[position] = change.tombstone }
        }
        tombstones = stones.isEmpty ? nil : TombstoneCoding.encode(stones)
    }
}

extension HistoryChange.Kind {
    /// The letter the history table keeps.
    var letter: Character {
        switch self {
        case .insert: "i"
        case .update: "u"
        case .delete: "d"
        }
    }

    init?(letter: Character) {
        switch letter {
        case "i": self = .insert
        case "u": self = .update
        case "d": self = .delete
        default: return nil
        }
    }
}
