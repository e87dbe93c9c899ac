@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
@testable import CoreValuePostgres
import LibPQ
import Testing

/// A context's calls on a `PostgresStore` throw `CVManagedStructError` or `PostgresStoreError`, never the
/// driver's own types: each failure the server or the driver can report, scripted, reaches the caller as a
/// `PostgresStoreError` of the documented code with the original error as `underlying` (a lost `COMMIT`
/// reply: `ScriptedFailureTests`).
@Suite struct StoreErrorFamilyTests {
    @Test func everyPublicErrorIsDescribedByItsLocalizedDescription() {
        let errors: [any Error & CustomStringConvertible] = [
            PostgresStoreError(.poolTimeout, "no connection became free within 5 seconds"),
            LibPQError(.connectionFailed, "could not connect to 127.0.0.1:1"),
            DatabaseError(fields: ["C": "23505", "M": "duplicate key value violates unique constraint", "S": "ERROR"]),
        ]
        for error in errors {
            #expect(error.localizedDescription == error.description)
            #expect(!error.localizedDescription.contains("could not be completed"))
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let failure: @Sendable () -> any Error
        let code: PostgresStoreError.Code
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a unique violation", failure: { DatabaseError.scripted("23505", "duplicate key") },
            code: .serverError),
        Case(
            name: "a failed pipelined statement",
            failure: { PipelineError(index: 0, error: DatabaseError.scripted("23514", "check")) }, code: .serverError),
        Case(
            name: "serialization failures past the last attempt",
            failure: { DatabaseError.scripted("40001", "could not serialize access") }, code: .serverError),
        Case(
            name: "a value the driver cannot encode", failure: { LibPQError(.encoding, "bad value") },
            code: .driverError),
        Case(
            name: "a connection lost past the failover budget",
            failure: { LibPQError(.connectionLost, "server closed the connection unexpectedly") },
            code: .serverUnavailable),
    ]

    @Test(arguments: cases) func aSavesServerAndDriverErrorsArriveWrapped(_ failure: Case) throws {
        let sessions = ScriptedSessions { call in
            if case .statement(let sql, _) = call, sql.hasPrefix("INSERT") { throw failure.failure() }
            return try .inserted(1)
        }
        let store = try ScriptedFailureTests.store(sessions) { $0.failoverBudget = .zero }
        let (context, _) = try ScriptedFailureTests.contextWithNewProduct(store)
        let thrown = try #require(throws: PostgresStoreError.self) { try context.save() }
        #expect(thrown.code == failure.code)
        #expect(thrown.underlying != nil)
        let original = failure.failure()
        let expectedState = (original as? DatabaseError)?.sqlState ?? (original as? PipelineError)?.error.sqlState
        #expect(thrown.sqlState == expectedState)
        #expect(context.hasChanges)
    }

    @Test func aFetchsServerErrorArrivesWrapped() throws {
        let sessions = ScriptedSessions { _ in throw DatabaseError.scripted("42P01", "relation does not exist") }
        let store = try ScriptedFailureTests.store(sessions)
        let thrown = try #require(throws: PostgresStoreError.self) {
            let _: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: .key("id") == Int32(1))
        }
        #expect(thrown.code == .serverError)
        #expect(thrown.sqlState?.rawValue == "42P01")
        #expect("\(thrown)".hasPrefix("serverError: "))
    }

    /// A missing right (42501) is `permissionDenied`, naming the right the statement needed and the object.
    @Test func aMissingRightIsNamed() throws {
        let sessions = ScriptedSessions { _ in
            throw DatabaseError.scripted("42501", "permission denied for table Product")
        }
        let store = try ScriptedFailureTests.store(sessions)
        let thrown = try #require(throws: PostgresStoreError.self) {
            let _: [Product] = try Product.query(ManagedObjectContext(store: store), predicate: .key("id") == Int32(1))
        }
        #expect(thrown.code == .permissionDenied)
        #expect(thrown.sqlState == .insufficientPrivilege)
        #expect(thrown.message.contains("table Product"), "\(thrown)")
    }

    @Test func sqlStatePatternsMatchTheWrappedServerError() throws {
        let sessions = ScriptedSessions { call in
            if case .statement(let sql, _) = call, sql.hasPrefix("INSERT") {
                throw DatabaseError.scripted("23505", "duplicate key")
            }
            return try .inserted(1)
        }
        let (context, _) = try ScriptedFailureTests.contextWithNewProduct(try ScriptedFailureTests.store(sessions))
        var matched: [String] = []
        for _ in 0..<2 {
            do {
                try context.save()
            } catch SQLState.serializationFailure {
                matched.append("40001")
            } catch SQLState.uniqueViolation where matched.isEmpty {
                matched.append("23505")
            } catch SQLState.Class.integrityConstraintViolation {
                matched.append("23")
            }
        }
        #expect(matched == ["23505", "23"])
    }
}
