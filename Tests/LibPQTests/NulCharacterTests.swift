import LibPQ
import Testing

/// libpq takes C strings, so text with a NUL character would be cut short silently; it is refused instead.
@Suite struct NulCharacterTests {
    static func expectEncodingError(_ what: String, _ call: () throws -> Void) {
        do {
            try call()
            Issue.record("\(what) with a NUL character must be refused")
        } catch let error as LibPQError {
            #expect(error.code == .encoding, "\(what): \(error)")
            #expect(error.message.contains("NUL"), "\(what): \(error)")
        } catch {
            Issue.record("\(what): unexpected \(error)")
        }
    }

    @Test func everyEntryPointRefusesNUL() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            // Cut at the NUL, each of these would run the statement before it (an insert or a select).
            Self.expectEncodingError("query") { try connection.query("insert into t values (1)\0; garbage") }
            Self.expectEncodingError("execute") { try connection.execute("insert into t values (1)\0; garbage") }
            Self.expectEncodingError("prepare SQL") { try connection.prepare("p", "select 1\0 garbage") }
            Self.expectEncodingError("prepare name") { try connection.prepare("p\0q", "select 1") }
            Self.expectEncodingError("queryPrepared name") { try connection.queryPrepared("p\0q") }
            Self.expectEncodingError("copy") {
                try connection.copyInBinary("COPY t FROM STDIN (FORMAT binary)\0 junk", rows: [[PostgresValue]]())
            }
            Self.expectEncodingError("listen") { try connection.listen("chan\0nel") }
            Self.expectEncodingError("unlisten") { try connection.unlisten("chan\0nel") }
            Self.expectEncodingError("notify") { try connection.notify("chan\0nel") }
            Self.expectEncodingError("quoted identifier") {
                try connection.execute("select 1 as \(Connection.quoteIdentifier("a\0b"))")
            }
            Self.expectEncodingError("pipeline") { _ = try connection.pipeline([PipelineStatement("select 1\0x")]) }
            #expect(try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0) == 0)
            #expect(connection.transactionStatus == .idle)
        }
    }

    @Test func connectionStringWithNULIsInvalid() {
        do {
            _ = try ConnectionConfiguration("host=localhost\0 host=elsewhere")
            Issue.record("a connection string with a NUL character must be refused")
        } catch let error as LibPQError {
            #expect(error.code == .invalidConnectionString)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
