@_spi(StoreImplementation) import CoreValue
import Foundation

/// One attempt of a write transaction's commit identifier (see
/// ``PostgresStore/Configuration/resolvesCommitOutcomes``): the random ID its row in the commit table gets,
/// the advisory lock that names the backend running it, and where its row went.
///
/// ``StatementRunner`` writes the row with the transaction's first statement (in the same round trip), or,
/// when that statement also carries the `COMMIT` (a one-row save), inside that statement, with the rows it
/// returns: a save whose reply is lost can then be handed back its keys and versions.
final class CommitMarker {
    /// The row's identifier, made by the client.
    let id: UUID
    /// The transaction-scoped advisory lock the transaction holds (the random half of ``id``): a lookup finds
    /// the backend still running it by this lock, and waits it out.
    let lockKey: Int64
    /// The commit table, qualified.
    let table: SQLIdentifier
    /// The backend of the connection the transaction runs on (its process ID and start time), ended by a
    /// lookup if it still runs: it may hold statements it received but has not run yet, whose lock a lookup
    /// would not find. `nil` when unknown (behind a pooler: the race stays, see the Consistency article).
    let backend: (pid: Int32, start: String)?
    /// Where the statements that carry a `COMMIT` (``carrying(_:)``) are kept by shape; `nil`: built each time.
    let templates: StatementTemplates<CarryShape>?

    /// Where the row is.
    enum State {
        /// Not sent yet.
        case pending
        /// Sent with an earlier statement of the transaction.
        case sent
    }

    var state = State.pending
    /// The statement that carried the `COMMIT` and stored its returned rows in the row, when one did.
    private(set) var carried: SQL.ReturnedRows?

    /// The sentinel's ID as a SQL literal.
    private static let sentinel = SQL(unsafeRaw: "'\(SchemaMapping.commitSentinel)'::uuid")

    init(
        table: SQLIdentifier, backend: (pid: Int32, start: String)? = nil, id: UUID = CommitMarker.timeOrderedID(),
        templates: StatementTemplates<CarryShape>? = nil
    ) {
        self.table = table
        self.backend = backend
        self.templates = templates
        self.id = id
        let u = id.uuid
        lockKey = [u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15].reduce(0) { $0 << 8 | Int64($1) }
    }

    /// A UUID of version 7's layout: 48 bits of the time in milliseconds, then the fraction of that
    /// millisecond in 12 bits (RFC 9562, "increased clock precision"), then 62 random bits. New identifiers
    /// land at the right edge of the primary key's index, as a sequence's would, instead of on a random page
    /// each (which, after a checkpoint, writes a full page image to the WAL per insert). The random bits are
    /// one draw of the system generator, one `getrandom` call: Foundation's `UUID()` opens, reads and closes
    /// `/dev/urandom` on Linux, three system calls on every save.
    static func timeOrderedID(now: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let random = generator.next() as UInt64
        let microseconds = UInt64(max(0, now.timeIntervalSince1970 * 1_000_000))
        let milliseconds = microseconds / 1000
        let fraction = (microseconds % 1000) * 4096 / 1000
        // 48 bits of time, the version (7) in the next 4, the fraction in 12.
        let first = milliseconds << 16 | 0x7000 | fraction
        // The variant (binary 10) in the top 2 bits, then 62 random bits.
        let second = (random & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        func byte(_ word: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(first, 0), byte(first, 1), byte(first, 2), byte(first, 3), byte(first, 4), byte(first, 5),
                byte(first, 6), byte(first, 7), byte(second, 0), byte(second, 1), byte(second, 2),
                byte(second, 3), byte(second, 4), byte(second, 5), byte(second, 6), byte(second, 7)
            ))
    }

    /// `INSERT INTO commits (id, at) SELECT $1, now() FROM pg_advisory_xact_lock($2)`: the row and the lock.
    /// `now()` is the transaction's start, what pruning goes by.
    func insert() -> SQL {
        state = .sent
        return "INSERT INTO \(table) (id, at) SELECT \(typedBind: .scalar(.uuid, .uuid(id))), now() "
            + "FROM pg_advisory_xact_lock(\(typedBind: .int64(lockKey)))"
    }

    /// `statement`, which carries the transaction's `COMMIT`, returning the same rows and also keeping them in
    /// the row as JSON: `WITH w AS (statement), m AS (INSERT or UPDATE the row) SELECT * FROM w`. `nil` for
    /// a statement whose returned rows are not a table's columns (nothing to keep).
    ///
    /// A statement built once per shape (a one-row save's) gets a wrapper built once per shape too, sent
    /// again with new values: a request's save then renders no SQL text.
    func carrying(_ statement: SQL) -> SQL? {
        guard let rows = statement.returnedRows else { return nil }
        carried = rows
        let wasPending = state == .pending
        state = .sent
        var binds = statement.binds
        // The statement's binds fill their array: room for the two more at once, not grown twice.
        binds.reserveCapacity(binds.count + 2)
        binds.append(.scalar(.uuid, .uuid(id)))
        if wasPending { binds.append(.int64(lockKey)) }
        let build = { [self] in wrapping(statement, inserting: wasPending, atMostOne: rows.atMostOne) }
        guard let templates, let text = statement.keptText else { return build() }
        let shape = CarryShape(statement: text, inserting: wasPending, table: table, atMostOne: rows.atMostOne)
        return templates.statement(for: shape, binding: binds) ?? templates.keep(shape, build)
    }

    /// What fixes the text of ``carrying(_:)``'s statement.
    struct CarryShape: Hashable, Sendable {
        /// The carried statement's text.
        var statement: String
        /// Whether the wrapper inserts the row (else it updates the row sent earlier).
        var inserting: Bool
        var table: SQLIdentifier
        /// Whether the statement returns one row at most (``SQL/ReturnedRows/atMostOne``): its row is kept
        /// without an aggregate.
        var atMostOne: Bool
    }

    /// ``carrying(_:)``'s statement, built: the statement's binds, then the identifier, then (inserting) the lock.
    ///
    /// The rows are kept as a JSON array of objects, one per row (what ``carriedRows()`` reads back). A statement
    /// that returns one row at most builds that array from its row without an aggregate: the same value, for
    /// 3-8 us less of the server's time per save (BENCHMARKS.md, ninth round).
    private func wrapping(_ statement: SQL, inserting: Bool, atMostOne: Bool) -> SQL {
        let kept: SQL = atMostOne ? "(SELECT jsonb_build_array(to_jsonb(w)) FROM w)" : "(SELECT jsonb_agg(w) FROM w)"
        let id: SQL = "\(typedBind: .scalar(.uuid, .uuid(self.id)))"
        let write: SQL =
            inserting
            ? "INSERT INTO \(table) (id, at, result) SELECT \(id), now(), \(kept) "
                + "FROM pg_advisory_xact_lock(\(typedBind: .int64(lockKey)))"
            : "UPDATE \(table) SET result = \(kept) WHERE id = \(id)"
        return "WITH w AS (\(statement)), m AS (\(write)) SELECT * FROM w"
    }

    /// The statements of a lookup, in one transaction and one round trip, after the reply was lost:
    /// 1. ends the backend that still holds the lock (the old transaction, on this server), and the old
    ///    connection's backend if it still runs (``AbandonedAttempt/ending()``): `false` when one did not
    ///    exit in time;
    /// 2. takes the lock itself, without waiting: `true` once no transaction of this ID runs any longer;
    /// 3. counts this ID's row and the sentinel (whose absence means the table was emptied by hand).
    /// Each statement takes its own snapshot (READ COMMITTED), so the count sees what the old backend
    /// committed before it ended. Nothing is written.
    func lookup() -> [SQL] {
        [
            abandoned.ending(),
            "SELECT pg_try_advisory_xact_lock(\(typedBind: .int64(lockKey)))",
            "SELECT count(*) FILTER (WHERE id = \(typedBind: .scalar(.uuid, .uuid(id)))), "
                + "count(*) FILTER (WHERE id = \(Self.sentinel)) FROM \(table) "
                + "WHERE id IN (\(typedBind: .scalar(.uuid, .uuid(id))), \(Self.sentinel))",
        ]
    }

    /// This attempt, as a backend to end if its connection is lost.
    var abandoned: AbandonedAttempt { AbandonedAttempt(lockKey: lockKey, backend: backend) }

    /// The rows the carrying statement returned, read back from the row: the same columns of the same table,
    /// in the same order and types, so that the statement's own handler reads them. `nil` when no statement
    /// carried the `COMMIT` with its rows.
    func carriedRows() -> SQL? {
        guard let carried else { return nil }
        let columns = carried.columns.map { "r.\(SQLIdentifier.quote($0))" }.joined(separator: ", ")
        return "SELECT \(SQL(unsafeRaw: columns)) FROM \(table) AS c "
            + "CROSS JOIN LATERAL jsonb_populate_recordset(NULL::\(carried.table), c.result) AS r "
            + "WHERE c.id = \(typedBind: .scalar(.uuid, .uuid(id)))"
    }
}
