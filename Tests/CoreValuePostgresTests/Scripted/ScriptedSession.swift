@testable import CoreValuePostgres
import Foundation
import LibPQ
import Synchronization

/// What a scripted session is asked: a statement (alone or in a pipeline), a transaction's end, or a
/// COPY's data and end.
enum ScriptedCall: Sendable {
    case statement(sql: String, parameters: [PostgresValue])
    case commit
    case copyData([UInt8])
    case copyEnd(sql: String)

    /// The statement's SQL, or `nil`.
    var sql: String? {
        if case .statement(let sql, _) = self { return sql }
        return nil
    }
}

/// Sessions that answer from a script instead of a server, for the store's error paths: every call goes to
/// `answer`, which returns the result or throws the failure to test (a lost connection, a serialization
/// failure, a lost `COMMIT` reply). `log` keeps what was asked, with `BEGIN` and `ROLLBACK` as the
/// transactions went.
final class ScriptedSessions: SessionSource, Sendable {
    private let state: Mutex<[String]> = Mutex([])
    private let answer: @Sendable (ScriptedCall) throws -> QueryResult

    init(_ answer: @escaping @Sendable (ScriptedCall) throws -> QueryResult) {
        self.answer = answer
    }

    /// Everything asked so far: SQL texts, `BEGIN`, `COMMIT`, `ROLLBACK`, `COPY DATA`.
    var log: [String] { state.withLock { $0 } }

    fileprivate func record(_ entry: String) { state.withLock { $0.append(entry) } }

    fileprivate func ask(_ call: ScriptedCall) throws -> QueryResult {
        switch call {
        case .statement(let sql, _): record(sql)
        case .commit: record("COMMIT")
        case .copyData: record("COPY DATA")
        case .copyEnd: record("COPY END")
        }
        return try answer(call)
    }

    func withSession<T>(_ body: (any DatabaseSession) throws -> T) throws -> T {
        try body(ScriptedSession(sessions: self))
    }

    /// The store's write statements asked so far, in order (no `BEGIN`, `COMMIT` or `ROLLBACK`).
    var statements: [String] { log.filter { !["BEGIN", "COMMIT", "ROLLBACK", "COPY DATA", "COPY END"].contains($0) } }
}

/// One session of ``ScriptedSessions``.
private final class ScriptedSession: DatabaseSession {
    let sessions: ScriptedSessions
    var roundTrips = 0
    var statementsPrepared = 0
    var backendIdentity: (pid: Int32, start: String)? { nil }
    /// The transaction's COMMIT goes with the next statement; then, whether it ran.
    var commitRequested = false
    var committedWithLastStatement = false

    func commitWithNextStatement(asImplicitTransaction: Bool) { commitRequested = true }
    var commitGoesWithNextStatement: Bool { commitRequested }
    func adoptResolvedCommit() {
        commitRequested = false
        committedWithLastStatement = true
    }

    /// The COMMIT asked with a statement, when one was requested.
    private func commitIfRequested() throws {
        guard commitRequested else { return }
        commitRequested = false
        _ = try sessions.ask(.commit)
        committedWithLastStatement = true
    }

    init(sessions: ScriptedSessions) { self.sessions = sessions }

    func query(_ sql: String, _ parameters: [PostgresValue]) throws -> QueryResult {
        roundTrips += 1
        let result = try sessions.ask(.statement(sql: sql, parameters: parameters))
        try commitIfRequested()
        return result
    }

    func queryRows(_ sql: String, _ parameters: [PostgresValue], _ body: (QueryResult) throws -> Void) throws -> Int {
        let result = try query(sql, parameters)
        if result.rowCount > 0 { try body(result) }
        return result.rowCount
    }

    func copyOutBinary(_ copySQL: String, _ body: (inout CopyRow) throws -> Void) throws -> Int {
        throw LibPQError(.copyFailed, "a scripted session has no COPY TO")
    }

    func copyIn(_ copySQL: String, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws -> Int {
        roundTrips += 1
        sessions.record(copySQL)
        try body { bytes in _ = try sessions.ask(.copyData(bytes)) }
        return try sessions.ask(.copyEnd(sql: copySQL)).affectedRows
    }

    func transaction<T>(isolation: IsolationLevel?, readOnly: Bool, _ body: () throws -> T) throws -> T {
        sessions.record("BEGIN")
        committedWithLastStatement = false
        commitRequested = false
        let value: T
        do {
            value = try body()
        } catch {
            if !committedWithLastStatement { sessions.record("ROLLBACK") }
            throw error
        }
        if committedWithLastStatement { return value }
        roundTrips += 1
        _ = try sessions.ask(.commit)
        return value
    }

    func pipeline(
        _ body: (_ send: @escaping (String, [PostgresValue]) throws -> Void) throws -> Void,
        each: (Int, QueryResult) throws -> Void
    ) throws {
        roundTrips += 1
        // Asked as each statement is sent, as libpq reports a lost connection; a server error comes with the
        // results, as the failing statement's `PipelineError`.
        var answers: [Result<QueryResult, DatabaseError>] = []
        try body { sql, parameters in
            do {
                answers.append(.success(try self.sessions.ask(.statement(sql: sql, parameters: parameters))))
            } catch let error as DatabaseError {
                answers.append(.failure(error))
            }
        }
        for (index, answer) in answers.enumerated() {
            switch answer {
            case .success(let result): try each(index, result)
            case .failure(let error): throw PipelineError(index: index, error: error)
            }
        }
        try commitIfRequested()
    }

    func makeCancel() throws -> @Sendable () -> Void { {} }
}

extension QueryResult {
    /// A result of `rows` of `types` (binary cells), reporting `tag`.
    static func scripted(_ columns: [(String, PostgresType)], _ rows: [[PostgresValue]], tag: String? = nil) throws
        -> QueryResult
    {
        try QueryResult(
            columns: columns.map { Column(name: $0.0, type: $0.1) }, rows: rows.map { $0.map(\.bytes) },
            commandTag: tag ?? "SELECT \(rows.count)")
    }

    /// A command's result without rows (`tag`, such as `COPY 3`).
    static func command(_ tag: String) throws -> QueryResult { try scripted([], [], tag: tag) }

    /// `(_pk, _version)` rows for new rows: keys from `firstKey`, version 1.
    static func inserted(_ count: Int, firstKey: Int64 = 1) throws -> QueryResult {
        try scripted(
            [("_pk", .int8), ("_version", .int8)],
            (0..<count).map { [try PostgresValue(firstKey + Int64($0)), try PostgresValue(Int64(1))] },
            tag: "INSERT 0 \(count)")
    }
}

extension DatabaseError {
    /// A server error with `code` as its SQLSTATE.
    static func scripted(_ code: String, _ message: String = "scripted") -> DatabaseError {
        DatabaseError(fields: ["C": code, "S": "ERROR", "V": "ERROR", "M": message])
    }
}
