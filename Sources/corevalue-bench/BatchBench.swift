@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ

/// `corevalue-bench --batch URL [ROWS ROUNDS]`: batch requests and aggregates at scale (issue 32's speed
/// targets). ROWS `Item` rows are made by the server (untimed); then each op runs through the library and as
/// the same SQL sent on a plain connection (what `psql` sends), alternately, ROUNDS times, the data reset
/// untimed before each write. One line per op and way, best of ROUNDS: `op=<name> n= seconds= rows_per_s=`
/// and `op=<name>.sql ...`, then `ratio=` (ours / SQL's time). Exits 0 only if every check passed.
struct BatchBench {
    struct Item: CVManagedUniqueStruct {
        static let EntityName = "Item"
        static let IdentifierName = "id"
        func IdentifierValue() -> IdentifierType { id }
        var id: Int64
        var bucket: Int16
        var amount: Int64
        var active: Bool
        static func fromObject(_ o: ManagedObject) throws -> Item {
            try curry(self.init) <^> o <| "id" <^> o <| "bucket" <^> o <| "amount" <^> o <| "active"
        }
    }

    static let schema = "bench_batch"
    let url: String
    let rows: Int
    let rounds: Int

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Item") {
                Attribute("id", .int64, unique: true)
                Attribute("bucket", .int16)
                Attribute("amount", .int64)
                Attribute("active", .bool)
            }
        }
    }

    var table: String { "\(SQLIdentifier.quote(Self.schema)).\(SQLIdentifier.quote("Item"))" }

    /// Runs every op; returns the failed checks.
    func run() throws -> [String] {
        var failures: [String] = []
        let admin = try Connection(url)
        defer { admin.close() }
        try admin.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(Self.schema)) CASCADE")
        try admin.execute("CREATE SCHEMA \(SQLIdentifier.quote(Self.schema))")
        try admin.execute(SchemaPrinter(model: try Self.model(), schema: Self.schema).ddl)
        let store = try PostgresStore(
            model: try Self.model(),
            configuration: PostgresStore.Configuration(
                connection: try ConnectionConfiguration(url), schema: Self.schema
            ).with { $0.resolvesCommitOutcomes = BenchModel.resolvesCommits })
        defer { store.close() }
        try reset(admin)
        let tenth = rows / 10
        let expectedSum = Int64((1...rows).reduce(0) { $0 + $1 % 1000 })

        try compare("aggregate", n: rows, admin, reset: nil) {
            let context = ManagedObjectContext(store: store)
            let sum = try Item.aggregate(context, .sum(\.amount))
            if sum != expectedSum { failures.append("aggregate: sum \(sum ?? -1), expected \(expectedSum)") }
        } sql: {
            _ = try admin.query("SELECT sum(amount::numeric)::bigint FROM \(table)")
        }
        try compare("aggregate_grouped", n: rows, admin, reset: nil) {
            let groups = try Item.aggregate(ManagedObjectContext(store: store), .average(\.amount), groupedBy: \.bucket)
            if groups.count != 100 { failures.append("aggregate_grouped: \(groups.count) groups, expected 100") }
        } sql: {
            _ = try admin.query(
                "SELECT bucket, avg(amount)::double precision FROM \(table) GROUP BY bucket ORDER BY bucket")
        }
        let limit = Int64(tenth)
        try compare("batch_update", n: tenth, admin, reset: reset) {
            let result = try Item.batchUpdate(
                ManagedObjectContext(store: store), set: [.set(\.active, to: false)],
                where: #Predicate { $0.id <= limit })
            if result.count != tenth { failures.append("batch_update: \(result.count) rows, expected \(tenth)") }
        } sql: {
            try admin.execute(
                "UPDATE \(table) AS t SET active = false, \"_version\" = t.\"_version\" + 1 WHERE t.id <= \(tenth)")
        }
        let first = Int64(rows - tenth)
        try compare("batch_delete", n: tenth, admin, reset: reset) {
            let result = try Item.batchDelete(ManagedObjectContext(store: store), where: #Predicate { $0.id > first })
            if result.count != tenth { failures.append("batch_delete: \(result.count) rows, expected \(tenth)") }
        } sql: {
            try admin.execute("DELETE FROM \(table) AS t WHERE t.id > \(rows - tenth)")
        }
        return failures
    }

    /// Makes the table hold rows 1...ROWS again, analysed (untimed).
    func reset(_ admin: Connection) throws {
        try admin.execute("TRUNCATE \(table)")
        try admin.execute(
            "INSERT INTO \(table) (id, bucket, amount, active) SELECT g, (g % 100)::smallint, g % 1000, true "
                + "FROM generate_series(1, \(rows)) AS g")
        try admin.execute("VACUUM ANALYZE \(table)")
    }

    /// Times `ours` and `sql` alternately `rounds` times (`reset` before each, untimed) and prints both lines.
    func compare(
        _ op: String, n: Int, _ admin: Connection, reset: ((Connection) throws -> Void)?, ours: () throws -> Void,
        sql: () throws -> Void
    ) throws {
        var best = (ours: Double.infinity, sql: Double.infinity)
        for _ in 0..<rounds {
            try reset?(admin)
            best.ours = min(best.ours, try Self.time(ours))
            try reset?(admin)
            best.sql = min(best.sql, try Self.time(sql))
        }
        emit(Self.line(op, n, best.ours) + " ratio=\(String(format: "%.2f", best.ours / best.sql))")
        emit(Self.line(op + ".sql", n, best.sql))
    }

    static func time(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        return seconds(ContinuousClock.now - start)
    }

    static func line(_ op: String, _ n: Int, _ seconds: Double) -> String {
        "op=\(op) n=\(n) seconds=\(String(format: "%.6f", seconds)) rows_per_s=\(String(format: "%.1f", Double(n) / seconds))"
    }
}
