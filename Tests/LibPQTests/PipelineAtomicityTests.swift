import Foundation
@testable import LibPQ
import Testing

/// A pipeline that fails before or while sending must not commit the statements before the failure.
@Suite struct PipelineAtomicityTests {
    static func count(_ connection: Connection) throws -> Int64 {
        try connection.query("select count(*) from t").decode(Int64.self, row: 0, column: 0)
    }

    static let insert = PipelineStatement("insert into t values (1)")

    @Test func tooManyParametersCommitNothing() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            let tooMany = [PostgresValue](repeating: .null(.int4), count: 65_536)
            do {
                _ = try connection.pipeline([Self.insert, PipelineStatement("select 1", tooMany)])
                Issue.record("65,536 parameters must be rejected")
            } catch let error as LibPQError {
                #expect(error.code == .encoding)
                #expect(error.message.contains("pipeline statement 1"))
            }
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(connection) == 0)
        }
    }

    @Test func nulInSQLTextCommitsNothing() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            do {
                // Cut at the NUL, the second statement would be a valid insert and both would commit.
                _ = try connection.pipeline([Self.insert, PipelineStatement("insert into t values (2)\0 junk")])
                Issue.record("SQL text with a NUL must be rejected")
            } catch let error as LibPQError {
                #expect(error.code == .encoding)
                #expect(error.message.contains("NUL"))
            }
            #expect(try Self.count(connection) == 0)
        }
    }

    @Test func nulInTextParameterCommitsNothing() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int, label text)")
            #expect(throws: LibPQError.self) { try PostgresValue("a\0b") }
            // Raw bytes bypass the String check; the server refuses them and the sync rolls back.
            let raw = PostgresValue(type: .text, bytes: Array("a\0b".utf8))
            do {
                _ = try connection.pipeline([
                    PipelineStatement("insert into t values (1, 'ok')"),
                    PipelineStatement("insert into t values (2, $1)", [raw]),
                ])
                Issue.record("a text value with a NUL byte must be refused")
            } catch let error as PipelineError {
                #expect(error.index == 1)
                #expect(error.error.sqlState == .characterNotInRepertoire)
            }
            #expect(try Self.count(connection) == 0)
        }
    }

    @Test func sendFailureAfterSomeStatementsRollsThemBack() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            // Past our own check, libpq refuses to send 65,536 parameters after the insert went out.
            let statements = [Self.insert, PipelineStatement("select 1")]
            let encoded = [
                try EncodedParameters([]),
                try EncodedParameters(
                    [PostgresValue](repeating: .null(.int4), count: 65_536), limit: .max),
            ]
            let handle = try connection.requireHandle()
            do {
                _ = try connection.sendPipeline(handle, statements, encoded)
                Issue.record("libpq must refuse 65,536 parameters")
            } catch let error as LibPQError {
                #expect(error.code == .pipelineFailed)
            }
            #expect(!connection.isBroken)
            #expect(connection.transactionStatus == .idle)
            #expect(try Self.count(connection) == 0)
        }
    }

    @Test func sendFailureInsideATransactionLeavesItToTheCaller() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("create table t (n int)")
            try connection.execute("begin")
            let encoded = [
                try EncodedParameters([]),
                try EncodedParameters([PostgresValue](repeating: .null(.int4), count: 65_536), limit: .max),
            ]
            #expect(throws: LibPQError.self) {
                _ = try connection.sendPipeline(
                    try connection.requireHandle(), [Self.insert, PipelineStatement("select 1")], encoded)
            }
            // The sync does not commit an explicit transaction; it is still open and the caller decides.
            #expect(connection.transactionStatus == .inTransaction)
            try connection.execute("rollback")
            #expect(try Self.count(connection) == 0)
        }
    }
}
