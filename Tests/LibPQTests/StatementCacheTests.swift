import Foundation
import LibPQ
import Testing

/// The connection's statement cache (`statementCacheCapacity`): statements prepared once per session and run
/// by name, the least recently used deallocated, stale plans prepared again, a session that forgets turning
/// the cache off. Round trips and preparations are counted by the driver, so they are asserted exactly.
@Suite struct StatementCacheTests {
    /// The names of the statements this session holds prepared.
    static func prepared(_ connection: Connection) throws -> [String] {
        let result = try connection.query("select name from pg_prepared_statements order by prepare_time, name")
        return try (0..<result.rowCount).map { try result.decode(String.self, row: $0, column: 0) }
    }

    @Test func aStatementIsPreparedOnceAndRunByName() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 8
            let sql = "select $1::int8 + 1"
            let trips = connection.roundTrips
            #expect(try connection.query(sql, [PostgresValue(Int64(41))]).decode(Int64.self, row: 0, column: 0) == 42)
            // Prepared (one round trip), then run.
            #expect(connection.roundTrips - trips == 2)
            #expect(connection.statementsPrepared == 1)
            for n in 0..<5 {
                let result = try connection.query(sql, [PostgresValue(Int64(n))])
                #expect(try result.decode(Int64.self, row: 0, column: 0) == Int64(n) + 1)
            }
            #expect(connection.roundTrips - trips == 7)
            #expect(connection.statementsPrepared == 1)
            // The same text bound with another type is another statement.
            _ = try connection.query(sql, [PostgresValue(Int32(1))])
            #expect(connection.statementsPrepared == 2)
            // Rows one by one go through the same cache.
            var seen: [Int64] = []
            try connection.queryRows("select generate_series(1, $1::int8)", [PostgresValue(Int64(3))]) {
                seen.append(try $0.decode(Int64.self, row: 0, column: 0))
            }
            try connection.queryRows("select generate_series(1, $1::int8)", [PostgresValue(Int64(2))]) {
                seen.append(try $0.decode(Int64.self, row: 0, column: 0))
            }
            #expect(seen == [1, 2, 3, 1, 2])
            #expect(connection.statementsPrepared == 3)
            let names = try Self.prepared(connection)
            #expect(names.count == 4)  // and the catalog query itself
            #expect(names.allSatisfy { $0.hasPrefix("_libpq_cached_") })
        }
    }

    @Test func withoutACacheNothingIsPrepared() throws {
        try TestDatabase.withSchema { connection, _ in
            #expect(connection.statementCacheCapacity == 0)
            let trips = connection.roundTrips
            for _ in 0..<3 { _ = try connection.query("select 1") }
            #expect(connection.roundTrips - trips == 3)
            #expect(connection.statementsPrepared == 0)
            #expect(try Self.prepared(connection).isEmpty)
        }
    }

    @Test func theLeastRecentlyUsedStatementIsDeallocatedWhenIdle() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 3
            for n in 1...3 { _ = try connection.query("select \(n)") }
            _ = try connection.query("select 1")  // used again: "select 2" is now the oldest
            // The catalog query is the fourth statement: "select 2" leaves the cache. It is deallocated at the
            // start of the next call, so the second reading no longer lists it.
            _ = try Self.prepared(connection)
            let names = try Self.prepared(connection)
            #expect(names.count == 3)
            #expect(connection.statementsPrepared == 4)
            let texts = try connection.query("select statement from pg_prepared_statements order by statement")
            let statements = try (0..<texts.rowCount).map { try texts.decode(String.self, row: $0, column: 0) }
            #expect(!statements.contains("select 2"))
            #expect(statements.contains("select 1"))
        }
    }

    /// The last few statements found are looked at before the cache's table (`RecentlyFound`), holding where
    /// they are in it: a statement added or dropped moves those places, and must never send another
    /// statement's name. Each text here returns its own number, so a wrong name shows in the result.
    @Test func statementsFoundAgainAfterTheCacheChangedRunUnderTheirOwnNames() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 2
            let texts = (1...4).map { "select \($0)::int8 as n" }
            func run(_ n: Int) throws {
                let result = try connection.query(texts[n - 1])
                #expect(try result.decode(Int64.self, row: 0, column: 0) == Int64(n))
            }
            // Found again and again, then pushed out and prepared again, in every order.
            for order in [[1, 2, 1, 2], [3, 1, 3, 2], [4, 4, 1, 3], [2, 1, 4, 3, 2, 1]] {
                for n in order { try run(n) }
            }
            #expect(connection.statementsPrepared > 4)
        }
    }

    @Test func aPlanMadeStaleByASchemaChangeIsPreparedAgainOutsideATransaction() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 8
            try connection.execute("create table t (id int8 primary key, a text); insert into t values (1, 'one')")
            let sql = "select * from t where id = $1"
            #expect(try connection.query(sql, [PostgresValue(Int64(1))]).columns.count == 2)
            try connection.execute("alter table t add column b int4 default 7")
            let result = try connection.query(sql, [PostgresValue(Int64(1))])
            #expect(result.columns.count == 3)
            #expect(try result.decode(Int32.self, row: 0, column: 2) == 7)
            #expect(connection.statementsPrepared == 2)
        }
    }

    @Test func aStalePlanInsideATransactionIsThrownAndPreparedAfreshNextTime() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 8
            try connection.execute("create table t (id int8 primary key, a text); insert into t values (1, 'one')")
            let sql = "select * from t where id = $1"
            _ = try connection.query(sql, [PostgresValue(Int64(1))])
            try connection.execute("alter table t add column b int4")
            do {
                try connection.withTransaction { connection in
                    _ = try connection.query(sql, [PostgresValue(Int64(1))])
                }
                Issue.record("a stale plan inside a transaction aborts it")
            } catch let error as DatabaseError {
                #expect(error.isStalePreparedStatement)
                #expect(error.sqlState == .featureNotSupported)
            }
            #expect(connection.transactionStatus == .idle)
            // Run again (as a store's retry does), it is prepared afresh.
            let columns = try connection.withTransaction { connection in
                try connection.query(sql, [PostgresValue(Int64(1))]).columns.count
            }
            #expect(columns == 3)
        }
    }

    @Test func aSessionThatForgetsItsStatementsTurnsTheCacheOff() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 8
            _ = try connection.query("select $1::int8", [PostgresValue(Int64(1))])
            // What a transaction-mode pooler does when the next transaction lands on another server connection.
            try connection.execute("deallocate all")
            let result = try connection.query("select $1::int8", [PostgresValue(Int64(2))])
            #expect(try result.decode(Int64.self, row: 0, column: 0) == 2)
            #expect(connection.statementCacheCapacity == 0)
            let prepared = connection.statementsPrepared
            _ = try connection.query("select $1::int8", [PostgresValue(Int64(3))])
            #expect(connection.statementsPrepared == prepared)
        }
    }

    @Test func aPipelinePreparesItsNewStatementsInTheSameRoundTrip() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 8
            try connection.execute("create table t (n int8 primary key)")
            let insert = "insert into t values ($1)"
            let trips = connection.roundTrips
            let results = try connection.pipeline(
                try (1...3).map { PipelineStatement(insert, [try PostgresValue(Int64($0))]) }
                    + [PipelineStatement("select count(*) from t")])
            #expect(connection.roundTrips - trips == 1)
            #expect(connection.statementsPrepared == 2)
            #expect(results.count == 4)
            #expect(try results[3].decode(Int64.self, row: 0, column: 0) == 3)
            // A failure is attributed to the caller's statement, preparations not counted; the preparation
            // skipped after it is forgotten, so the next use prepares it again.
            do {
                _ = try connection.pipeline([
                    PipelineStatement(insert, [try PostgresValue(Int64(4))]),
                    PipelineStatement(insert, [try PostgresValue(Int64(1))]),
                    PipelineStatement("select n from t where n = $1", [try PostgresValue(Int64(4))]),
                ])
                Issue.record("the duplicate key must fail the pipeline")
            } catch let error as PipelineError {
                #expect(error.index == 1)
                #expect(error.error.sqlState == .uniqueViolation)
            }
            let prepared = connection.statementsPrepared
            let found = try connection.query("select n from t where n = $1", [PostgresValue(Int64(2))])
            #expect(try found.decode(Int64.self, row: 0, column: 0) == 2)
            #expect(connection.statementsPrepared == prepared + 1)
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 3)
        }
    }

    @Test func resetForgetsTheCache() throws {
        try TestDatabase.withSchema { connection, _ in
            connection.statementCacheCapacity = 8
            _ = try connection.query("select 1")
            try connection.reset()
            #expect(try connection.query("select 1").rowCount == 1)
            #expect(connection.statementsPrepared == 2)
            #expect(connection.statementCacheCapacity == 8)
        }
    }
}
