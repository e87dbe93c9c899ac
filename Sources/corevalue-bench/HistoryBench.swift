@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ

/// `corevalue-bench --history URL N`: N history transactions written by the server (one `INSERT ... SELECT`
/// of recorded saves, each updating one employee), then read through `history(after:limit:)` in pages of
/// 1,000 from the start: `op=history_read` with the largest resident set seen while reading (flat whatever
/// N: each page is dropped before the next is read).
enum HistoryBench {
    static let schema = "corevalue_bench_history"
    static let page = 1_000

    /// Runs the op and returns the failed checks.
    static func run(url: String, n: Int) throws -> [String] {
        let model = try BenchModel.make()
        let admin = try Connection(url)
        defer { admin.close() }
        let quoted = SQLIdentifier.quote(schema)
        try admin.execute("DROP SCHEMA IF EXISTS \(quoted) CASCADE; CREATE SCHEMA \(quoted)")
        try admin.execute(SchemaPrinter(model: model, schema: schema, recordsHistory: true).ddl)
        let table = SQLIdentifier(SchemaMapping.historyTable, schema: schema).quoted
        try admin.execute(
            "INSERT INTO \(table) (author, entities, properties, kinds, entity_runs, key_ranges, version_runs, property_runs) "
                + "SELECT 'bench', '{Employee}', '{\"\",salary}', 'u', '{0,1}', ARRAY[g::bigint, 1], '{2,1}', '{1,1}' "
                + "FROM generate_series(1, \(n)) g")
        let store = try PostgresStore(
            model: model, configuration: try .init(url: url, schema: schema).with { $0.recordsHistory = true })
        defer { store.close() }

        var token: HistoryToken?
        var count = 0
        var lastNumber: Int64 = 0
        var ordered = true
        var peak = ResidentMemory.current()
        let start = ContinuousClock.now
        while true {
            let transactions = try store.history(after: token, limit: page)
            for transaction in transactions {
                if transaction.transactionNumber <= lastNumber { ordered = false }
                lastNumber = transaction.transactionNumber
            }
            count += transactions.count
            peak = max(peak, ResidentMemory.current())
            guard let last = transactions.last, transactions.count == page else { break }
            token = last.token
        }
        let elapsed = ContinuousClock.now - start
        printLine(op: "history_read", rows: count, elapsed: elapsed, extra: "peak_rss_bytes=\(peak)")
        try admin.execute("DROP SCHEMA \(quoted) CASCADE")
        var failures: [String] = []
        if count != n { failures.append("history_read: \(count) transactions, expected \(n)") }
        if !ordered { failures.append("history_read: transaction numbers out of order") }
        return failures
    }
}

extension Workload {
    /// Runs `body` with ``store`` recording history (the `.history` variants of the write ops), then counts
    /// what it recorded: at least `expected` transactions.
    func withHistory(expected: Int, _ body: () throws -> Void) throws {
        let plain = store
        store = try PostgresStore(
            model: model,
            configuration: try .init(url: url, schema: BenchModel.schema).with { $0.recordsHistory = true })
        defer {
            store.close()
            store = plain
        }
        let before = try historyCount()
        try body()
        let recorded = try historyCount() - before
        if recorded < expected { failures.append("history: \(recorded) transactions recorded, expected \(expected)") }
    }

    private func historyCount() throws -> Int {
        Int(
            try admin.query("SELECT count(*) FROM \(table(SchemaMapping.historyTable))").decode(
                Int64.self, row: 0, column: 0))
    }
}
