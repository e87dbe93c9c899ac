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
        "INSERT INTO \(history) (author, name, entities, properties, kinds, entity_runs, key_ranges, version_runs, "
            + "property_runs, tombstones) VALUES (\(bind: record.author.map { .text($0) } ?? .scalar(.string, .null)), "
            + "\(bind: record.name.map { .text($0) } ?? .scalar(.string, .null)), "
            + "\(typedBind: .array(.string, record.entities.map { .string($0) })), "
            + "\(typedBind: .array(.string, record.properties.map { .string($0) })), \(bind: .text(record.kinds)), "
            + "\(typedBind: .array(.int32, HistoryRuns.runs(record.entityIndex) { Int32($0) }.map { .int32($0) })), "
            + "\(typedBind: .int64Array(HistoryRuns.ranges(record.keys))), "
            + "\(typedBind: .optionalInt64Array(HistoryRuns.runs(record.versions) { Int64($0) })), "
            + "\(typedBind: .array(.int32, HistoryRuns.runs(record.propertyIndex) { Int32($0) }.map { .int32($0) })), "
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

    /// The history's identifier, what was pruned, the statement's snapshot (the "now" of a token) and the
    /// highest number it shows.
    var current: SQL {
        "SELECT store_id::text, pruned, pg_current_snapshot()::text, (SELECT coalesce(max(\"_pk\"), 0) FROM "
            + "\(history)) FROM \(state) ORDER BY \"_pk\" LIMIT 1"
    }

    /// Up to `limit` transactions after `token`, in one statement and so one snapshot: the state row's
    /// columns (as ``current``) on every row, then for each transaction `"_pk"`, `xid`, `committed_at`,
    /// `author`, `name`, `entities`, `kinds`, `keys`, `changed`, `tombstones` and whether it belongs to the
    /// token's batch; the batch's rest first, then the new batch, each in number order. With no transaction
    /// to read, one row of the state's columns and nulls.
    ///
    /// Each part is written so that one index serves it whatever the statistics and whether the plan is
    /// generic (the statement is prepared): the rest of a batch walks the primary key from `after`; the new
    /// batch is a range of the `xid` index, bounded on both sides (its rows started after the batch's oldest
    /// running transaction and ended before now), which the planner takes as narrow even for a table never
    /// analysed. A one-sided bound let it walk the whole table by key on every poll.
    func read(after token: HistoryToken, limit: Int) -> SQL {
        let columns: SQL =
            "\"_pk\", xid, committed_at, author, name, entities, kinds, key_ranges, properties, tombstones, "
            + "version_runs, entity_runs, property_runs"
        let base = SQLBind.text(token.base.text)
        let batch = SQLBind.text(token.batch.text)
        let rest: SQL =
            "SELECT \(columns), true AS in_batch FROM \(history) WHERE \"_pk\" > \(bind: .int64(token.after)) "
            + "AND pg_visible_in_snapshot(xid, \(bind: batch)::pg_snapshot) "
            + "AND (NOT pg_visible_in_snapshot(xid, \(bind: base)::pg_snapshot) "
            + "OR \"_pk\" > \(bind: .int64(token.baseNumber))) "
            + "ORDER BY \"_pk\" LIMIT \(bind: .int64(Int64(limit)))"
        let new: SQL =
            "SELECT \(columns), false FROM \(history) WHERE xid >= \(bind: .text(String(token.batch.xmin)))::xid8 "
            + "AND xid < pg_snapshot_xmax(pg_current_snapshot()) AND NOT pg_visible_in_snapshot(xid, \(bind: batch)::pg_snapshot) "
            + "ORDER BY \"_pk\" LIMIT \(bind: .int64(Int64(limit)))"
        return "SELECT s.store_id::text, s.pruned, pg_current_snapshot()::text, h.\"_pk\", h.xid::text, "
            + "h.committed_at, h.author, h.name, h.entities, h.kinds, h.key_ranges, h.properties, h.tombstones, h.in_batch, "
            + "h.version_runs, h.entity_runs, h.property_runs "
            + "FROM (SELECT store_id, pruned FROM \(state) ORDER BY \"_pk\" LIMIT 1) s "
            + "LEFT JOIN LATERAL ((\(rest)) UNION ALL (\(new))) h ON true "
            + "ORDER BY h.in_batch DESC, h.\"_pk\" LIMIT \(bind: .int64(Int64(limit)))"
    }

    /// The state row, locked for a prune: identifier and what was pruned.
    var lockState: SQL { "SELECT store_id::text, pruned FROM \(state) ORDER BY \"_pk\" LIMIT 1 FOR UPDATE" }

    /// The statement's snapshot, and the lowest transaction ID recorded at or after `date` that it shows
    /// (`NULL` when none): what a prune by date keeps starts there (see `HistorySnapshot.truncated(below:)`).
    func horizon(before date: Date) -> SQL {
        "SELECT pg_current_snapshot()::text, (SELECT min(xid) FROM \(history) "
            + "WHERE committed_at >= \(bind: .scalar(.date, .date(date))))::text"
    }

    /// Deletes what `snapshot` shows numbered up to `number`: how many, and the highest number deleted.
    func prune(upTo snapshot: HistorySnapshot, number: Int64) -> SQL {
        "WITH deleted AS (DELETE FROM \(history) WHERE xid < \(bind: .text(String(snapshot.xmax)))::xid8 "
            + "AND pg_visible_in_snapshot(xid, \(bind: .text(snapshot.text))::pg_snapshot) "
            + "AND \"_pk\" <= \(bind: .int64(number)) RETURNING \"_pk\") "
            + "SELECT count(*), coalesce(max(\"_pk\"), 0) FROM deleted"
    }

    /// Records what was pruned (``PostgresStore`` keeps it as `snapshot#number`).
    func recordPruned(_ pruned: HistoryReading.Pruned) -> SQL {
        "UPDATE \(state) SET pruned = \(bind: .text(pruned.snapshot.text + "#" + String(pruned.number)))"
    }
}

/// One transaction's row of the history table, as recorded: per change a kind letter, an entity and a
/// property list by position in ``entities`` and ``properties``, a key and a version.
struct HistoryRecord {
    var author: String?
    var name: String?
    var entities: [String] = []
    /// Property lists, names joined by commas; the first is the empty list.
    var properties: [String] = [""]
    /// One letter per change: `i`nsert, `u`pdate, `d`elete.
    var kinds = ""
    var entityIndex: [Int32] = []
    var keys: [Int64] = []
    var versions: [Int64?] = []
    var propertyIndex: [Int32] = []
    /// The deletes' tombstones (``TombstoneCoding``), or `nil` when none has one.
    var tombstones: String?

    init(author: String?, name: String?, changes: [HistoryChange]) {
        self.author = author
        self.name = name
        entityIndex.reserveCapacity(changes.count)
        keys.reserveCapacity(changes.count)
        versions.reserveCapacity(changes.count)
        propertyIndex.reserveCapacity(changes.count)
        var entityPositions: [String: Int32] = [:]
        var propertyPositions: [String: Int32] = ["": 0]
        // Consecutive changes of a bulk save share one entity and one (shared) name array: compared first,
        // which for a shared array costs nothing.
        var lastEntity: (name: String, at: Int32)?
        var lastNames: (names: [String], at: Int32)?
        var stones: [Int: [String: AttributeValue]] = [:]
        for (position, change) in changes.enumerated() {
            kinds.append(change.kind.letter)
            keys.append(change.objectID.primaryKey ?? 0)
            versions.append(change.version)
            if lastEntity?.name != change.entityName {
                lastEntity = (change.entityName, Self.position(of: change.entityName, in: &entities, &entityPositions))
            }
            if lastNames?.names != change.updatedProperties {
                let joined = change.updatedProperties.joined(separator: ",")
                lastNames = (change.updatedProperties, Self.position(of: joined, in: &properties, &propertyPositions))
            }
            entityIndex.append(lastEntity?.at ?? 0)
            propertyIndex.append(lastNames?.at ?? 0)
            if !change.tombstone.isEmpty { stones[position] = change.tombstone }
        }
        tombstones = stones.isEmpty ? nil : TombstoneCoding.encode(stones)
    }

    private static func position(of value: String, in list: inout [String], _ positions: inout [String: Int32])
        -> Int32
    {
        if let known = positions[value] { return known }
        let position = Int32(list.count)
        list.append(value)
        positions[value] = position
        return position
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
