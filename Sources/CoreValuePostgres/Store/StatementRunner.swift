import CoreValue
import LibPQ

/// Sends ``SQL`` on one connection, converting binds to wire values and counting statements.
struct StatementRunner {
    let connection: Connection
    let counter: StatisticsCounter
    /// The async call this runner works for: no statement is sent once it is cancelled.
    var cancellation: CancellationToken? = nil

    /// Runs one statement.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidValue`` for more than 65,535 parameters (the store's own
    ///   statements bind arrays and stay far below); the driver's errors (`DatabaseError` from the server).
    @discardableResult
    func run(_ sql: SQL) throws -> QueryResult {
        let binds = sql.binds
        guard binds.count <= 65_535 else {
            throw PostgresStoreError(.invalidValue, "a statement has \(binds.count) parameters; the limit is 65,535")
        }
        try cancellation?.checkCancellation()
        let parameters = try binds.map(BindEncoding.postgresValue)
        counter.record {
            $0.statements += 1
            $0.roundTrips += 1
        }
        return try connection.query(sql.text, parameters)
    }

    /// Runs `body` in a transaction (counting its `BEGIN` and `COMMIT`).
    func transaction<T>(isolation: IsolationLevel? = nil, readOnly: Bool = false, _ body: (StatementRunner) throws -> T)
        throws -> T
    {
        counter.record {
            $0.transactions += 1
            $0.roundTrips += 2
        }
        return try connection.withTransaction(isolation: isolation, readOnly: readOnly) { connection in
            try body(StatementRunner(connection: connection, counter: counter, cancellation: cancellation))
        }
    }
}
