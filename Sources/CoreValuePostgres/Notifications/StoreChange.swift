@_spi(StoreImplementation) import CoreValue
import Foundation

/// What one committed save changed in one entity, as a ``ChangeListener`` receives it.
///
/// A store opened with a `notificationChannel` sends one notification per committed save, inside the save's
/// transaction, so listeners hear about exactly the saves that committed. A save that changed too many rows
/// for PostgreSQL's 8,000-byte payload limit is announced by entity only: ``isComplete`` is `false` and the
/// ID lists are empty; re-fetch what you cache of that entity.
public struct StoreChange: Sendable, Hashable {
    /// The entity whose rows changed.
    public var entityName: String
    /// Rows the save inserted as new objects.
    public var inserted: [ManagedObjectID]
    /// Rows the save updated, owners whose to-many member lists changed, and every row a unique struct's
    /// upsert wrote (whether it inserted the row or found it there), in key order.
    public var updated: [ManagedObjectID]
    /// Rows the save deleted.
    public var deleted: [ManagedObjectID]
    /// Whether the ID lists are complete; `false` when the save was too large to list its rows.
    public var isComplete: Bool
    /// The server process ID of the connection that saved (one per pooled connection).
    public var senderPID: Int32

    /// Creates a change.
    public init(
        entityName: String, inserted: [ManagedObjectID] = [], updated: [ManagedObjectID] = [],
        deleted: [ManagedObjectID] = [], isComplete: Bool = true, senderPID: Int32 = 0
    ) {
        self.entityName = entityName
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.isComplete = isComplete
        self.senderPID = senderPID
    }
}

/// The JSON payload of a change notification: `{"v":1,"e":{"Employee":{"i":[1],"u":[2],"d":[3]}}}`, or with
/// `"partial":true` and empty lists when the full form would exceed PostgreSQL's payload limit.
struct ChangePayload: Codable, Equatable {
    struct Keys: Codable, Equatable {
        var i: [Int64] = []
        var u: [Int64] = []
        var d: [Int64] = []
    }

    /// The payload format's version.
    var v = 1
    /// Whether the lists were left out.
    var partial: Bool?
    /// Changed primary keys per entity.
    var e: [String: Keys] = [:]

    /// PostgreSQL refuses payloads of 8,000 bytes or more.
    static let limit = 7_999

    /// The payload of a committed change set.
    init(changes: ChangeSet, result: SaveResult) {
        func add(_ id: ManagedObjectID, _ path: WritableKeyPath<Keys, [Int64]>) {
            guard let key = id.primaryKey else { return }
            e[id.entityName, default: Keys()][keyPath: path].append(key)
        }
        for insert in changes.inserts {
            if let id = result.permanentIDs[insert.id] { add(id, insert.upsertKey == nil ? \.i : \.u) }
        }
        // An update sent "unless current" that found its row current wrote nothing.
        for update in changes.updates where !update.unlessCurrent || result.versions[update.id] != nil {
            add(update.id, \.u)
        }
        // An owner whose member list changed is an update, unless this save inserted it.
        let inserted = Set(changes.inserts.compactMap { $0.upsertKey == nil ? result.permanentIDs[$0.id] : nil })
        for change in changes.relationships {
            let owner = change.owner.isTemporary ? result.permanentIDs[change.owner] : change.owner
            if let owner, !inserted.contains(owner) { add(owner, \.u) }
        }
        for deletion in changes.deletes { add(deletion.id, \.d) }
        e = e.mapValues { keys in
            var keys = keys
            keys.u = Array(Set(keys.u)).sorted()
            return keys
        }
    }

    /// The JSON text, shortened to entity names when the full form is too long.
    func encoded() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        if let data = try? encoder.encode(self), data.count <= Self.limit {
            return String(decoding: data, as: UTF8.self)
        }
        let short = ChangePayload(v: v, partial: true, e: e.mapValues { _ in Keys() })
        let data = (try? encoder.encode(short)) ?? Data("{\"v\":1,\"partial\":true,\"e\":{}}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private init(v: Int, partial: Bool?, e: [String: Keys]) {
        self.v = v
        self.partial = partial
        self.e = e
    }

    /// The changes a payload announces, one per entity, sorted by entity name.
    static func changes(from payload: String, pid: Int32) throws -> [StoreChange] {
        let decoded = try JSONDecoder().decode(ChangePayload.self, from: Data(payload.utf8))
        let complete = decoded.partial != true
        return decoded.e.keys.sorted().map { name in
            let keys = decoded.e[name] ?? Keys()
            return StoreChange(
                entityName: name, inserted: keys.i.map { .permanent(name, $0) },
                updated: keys.u.map { .permanent(name, $0) }, deleted: keys.d.map { .permanent(name, $0) },
                isComplete: complete, senderPID: pid)
        }
    }
}
