@testable import LibPQ
import Testing

/// How a COMMIT that did not clearly succeed or fail is reported.
@Suite struct TransactionOutcomeTests {
    static func serverError(_ code: String, severity: String = "FATAL") -> DatabaseError {
        DatabaseError(fields: ["S": severity, "V": severity, "C": code, "M": "server message"], sql: "COMMIT")
    }

    @Test(arguments: ["57P01", "57P02", "08006", "08000"])
    func connectionErrorReplyToCommitIsOutcomeUnknown(_ code: String) {
        // Such a FATAL can be COMMIT's reply while libpq still reports CONNECTION_OK.
        let error = Connection.commitError(Self.serverError(code), connectionBroken: false)
        #expect((error as? LibPQError)?.code == .commitOutcomeUnknown)
        #expect("\(error)".contains(code))
    }

    @Test func lostOrBrokenConnectionIsOutcomeUnknown() {
        let lost = Connection.commitError(LibPQError(.connectionLost, "gone"), connectionBroken: false)
        #expect((lost as? LibPQError)?.code == .commitOutcomeUnknown)
        let broken = Connection.commitError(LibPQError(.protocolViolation, "odd"), connectionBroken: true)
        #expect((broken as? LibPQError)?.code == .commitOutcomeUnknown)
    }

    @Test func definiteServerRefusalStaysADatabaseError() {
        let error = Connection.commitError(Self.serverError("40001", severity: "ERROR"), connectionBroken: false)
        #expect((error as? DatabaseError)?.sqlState == .serializationFailure)
    }

    @Test(arguments: ["COMMIT", "ROLLBACK"])
    func bodyThatEndsTheTransactionIsNotToldNothingWasCommitted(_ end: String) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n int)")
            do {
                try connection.withTransaction { connection in
                    try connection.query("insert into t values (1)")
                    try connection.execute(end)
                }
                Issue.record("withTransaction must report that the body ended the transaction")
            } catch let error as LibPQError {
                #expect(error.code == .transactionEndedEarly)
                #expect(!error.message.contains("nothing was committed"))
            }
            #expect(connection.transactionStatus == .idle)
            let other = try TestDatabase.connect(schema: schema)
            defer { other.close() }
            let rows = try other.query("select count(*) from t").decode(Int64.self, row: 0, column: 0)
            #expect(rows == (end == "COMMIT" ? 1 : 0))
        }
    }
}
