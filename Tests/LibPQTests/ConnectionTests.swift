import Foundation
import LibPQ
import Testing

@Suite struct ConnectionTests {
    /// Terminates `victim`'s backend from another connection and waits until it is gone.
    static func terminate(_ victim: Connection, schema: String) throws {
        let killer = try TestDatabase.connect(schema: schema)
        defer { killer.close() }
        let result = try killer.query("select pg_terminate_backend($1, 10000)", [PostgresValue(victim.backendPID)])
        #expect(try result.decode(Bool.self, row: 0, column: 0))
    }

    @Test func terminatedBackendIsATypedErrorAndResetRecovers() throws {
        try TestDatabase.withSchema { connection, schema in
            let oldPID = connection.backendPID
            #expect(!connection.isBroken)
            try Self.terminate(connection, schema: schema)
            do {
                try connection.query("select 1")
                Issue.record("a query on a terminated backend must fail")
            } catch let error as LibPQError {
                #expect(error.code == .connectionLost)
            } catch let error as DatabaseError {
                #expect(error.sqlState.isConnectionError)
            }
            #expect(connection.isBroken)
            #expect(connection.transactionStatus == .unknown)
            #expect(throws: LibPQError.self) { try connection.execute("select 1") }
            try connection.reset()
            #expect(!connection.isBroken)
            #expect(connection.backendPID != oldPID)
            #expect(try connection.query("select 41 + 1").decode(Int32.self, row: 0, column: 0) == 42)
        }
    }

    @Test func multiHostListAndTargetSessionAttributesAreLibpqs() throws {
        guard let url = TestDatabase.urlOrSkip() else { return }
        let options = try ConnectionConfiguration(url).options
        let host = try #require(options["host"] ?? options["hostaddr"])
        let port = options["port"] ?? "5432"
        var common = "connect_timeout=5"
        for key in ["dbname", "user"] { if let value = options[key] { common += " \(key)=\(value)" } }
        // The first host refuses (port 1); libpq moves on to the second.
        let connection = try Connection(
            "host=\(host),\(host) port=1,\(port) target_session_attrs=read-write \(common)")
        defer { connection.close() }
        #expect(try connection.query("select 1").rowCount == 1)
        // No standby exists, so asking for one fails with libpq's own reason.
        do {
            _ = try Connection("host=\(host) port=\(port) target_session_attrs=standby \(common)")
            Issue.record("there is no standby to connect to")
        } catch let error as LibPQError {
            #expect(error.code == .connectionFailed)
        }
    }

    @Test(arguments: ["pipeline", "copy", "notifications", "transaction"])
    func everyOperationReportsATerminatedBackend(_ operation: String) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute("create table t (n integer)")
            try connection.listen("c")
            try Self.terminate(connection, schema: schema)
            do {
                switch operation {
                case "pipeline":
                    _ = try connection.pipeline([PipelineStatement("select 1"), PipelineStatement("select 2")])
                case "copy":
                    try connection.copyInBinary("COPY t FROM STDIN (FORMAT binary)", rows: [[PostgresValue(Int32(1))]])
                case "notifications":
                    _ = try connection.waitForNotifications(timeout: .seconds(30))
                default:
                    try connection.withTransaction { connection in try connection.query("select 1") }
                }
                Issue.record("\(operation) on a terminated backend must fail")
            } catch let error as LibPQError {
                #expect(error.code == .connectionLost)
            } catch let error as DatabaseError {
                #expect(error.sqlState.isConnectionError)
            } catch let error as PipelineError {
                #expect(error.error.sqlState.isConnectionError)
            }
            #expect(connection.isBroken)
            try connection.reset()
            #expect(try connection.pipeline([PipelineStatement("select 1")]).count == 1)
        }
    }

    /// An empty cell and a NULL both have length 0: decoding must still tell them apart, in binary results.
    @Test func emptyCellsAreNotNull() throws {
        try TestDatabase.withSchema { connection, _ in
            let result = try connection.query(
                "SELECT ''::text, NULL::text, ''::bytea, NULL::bytea, 'x'::text")
            #expect(try result.decodeIfPresent(String.self, row: 0, column: 0) == "")
            #expect(try result.decodeIfPresent(String.self, row: 0, column: 1) == nil)
            #expect(try result.decodeIfPresent(Data.self, row: 0, column: 2) == Data())
            #expect(try result.decodeIfPresent(Data.self, row: 0, column: 3) == nil)
            #expect(try result.decodeIfPresent(String.self, row: 0, column: 4) == "x")
            #expect(result.isNull(row: 0, column: 1) && !result.isNull(row: 0, column: 0))
        }
    }

    @Test func closedConnectionThrowsConnectionClosed() throws {
        try TestDatabase.withSchema { connection, _ in
            #expect(connection.serverVersion >= 140_000)
            connection.close()
            connection.close()  // idempotent
            #expect(connection.isBroken)
            #expect(connection.backendPID == 0)
            let calls: [(Connection) throws -> Void] = [
                { try $0.query("select 1") }, { try $0.execute("select 1") }, { try $0.reset() },
                { try $0.prepare("p", "select 1") }, { _ = try $0.makeCanceller() }, { try $0.listen("c") },
                { _ = try $0.waitForNotifications(timeout: .zero) }, { try $0.withTransaction { _ in } },
                { try $0.copyInBinary("COPY t FROM STDIN (FORMAT binary)", rows: [[PostgresValue]]()) },
            ]
            for call in calls {
                do {
                    try call(connection)
                    Issue.record("a closed connection must throw")
                } catch let error as LibPQError {
                    #expect(error.code == .connectionClosed)
                }
            }
        }
    }

    @Test func serverErrorsCarryEveryField() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.execute(
                "create table person (id bigint primary key, email text constraint person_email_key unique)")
            try connection.query("insert into person values (1, $1)", [PostgresValue("bob@example.com")])
            do {
                try connection.query("insert into person values (2, $1)", [PostgresValue("bob@example.com")])
                Issue.record("a duplicate email must fail")
            } catch let error as DatabaseError {
                #expect(error.sqlState == .uniqueViolation)
                #expect(error.constraintName == "person_email_key")
                #expect(error.tableName == "person")
                #expect(error.schemaName == schema)
                #expect(error.severity == "ERROR")
                #expect(error.sourceFile != nil && error.sourceLine != nil && error.sourceFunction != nil)
                #expect(error.detail?.contains("bob@example.com") == true)
                #expect(error.sql == "insert into person values (2, $1)")
                #expect(!error.description.contains("bob@example.com"))
                #expect(error.description.contains("23505"))
            }
            do {
                try connection.query("select nope from person")
                Issue.record("an unknown column must fail")
            } catch let error as DatabaseError {
                #expect(error.sqlState == .undefinedColumn)
                #expect(error.position == 8)
            }
            #expect(try connection.query("").commandTag == "")
        }
    }
}
