import LibPQ
import Testing

@Suite struct ErrorMappingTests {
    static let uniqueViolationFields: [Character: String] = [
        "S": "ERROR", "V": "ERROR", "C": "23505",
        "M": "duplicate key value violates unique constraint \"person_email_key\"",
        "D": "Key (email)=(bob@example.com) already exists.",
        "s": "app", "t": "person", "n": "person_email_key",
        "F": "nbtinsert.c", "L": "666", "R": "_bt_check_unique", "P": "13",
    ]

    @Test func mapsEveryDiagnosticField() {
        let error = DatabaseError(
            fields: Self.uniqueViolationFields.merging([
                "H": "try another", "p": "3", "q": "select 1", "W": "PL/pgSQL function f()", "c": "email",
                "d": "text",
            ]) { $1 }, sql: "insert into person (email) values ($1)")
        #expect(error.sqlState == .uniqueViolation)
        #expect(error.sqlState.errorClass == "23")
        #expect(error.severity == "ERROR")
        #expect(error.nonLocalizedSeverity == "ERROR")
        #expect(error.detail == "Key (email)=(bob@example.com) already exists.")
        #expect(error.hint == "try another")
        #expect(error.position == 13)
        #expect(error.internalPosition == 3)
        #expect(error.internalQuery == "select 1")
        #expect(error.context == "PL/pgSQL function f()")
        #expect(error.schemaName == "app")
        #expect(error.tableName == "person")
        #expect(error.columnName == "email")
        #expect(error.dataTypeName == "text")
        #expect(error.constraintName == "person_email_key")
        #expect(error.sourceFile == "nbtinsert.c")
        #expect(error.sourceLine == 666)
        #expect(error.sourceFunction == "_bt_check_unique")
        #expect(error.sql == "insert into person (email) values ($1)")
    }

    @Test func codesAndClassesMatchInSwitchAndCatchPatterns() {
        let error = DatabaseError(fields: Self.uniqueViolationFields, sql: "insert")
        #expect(error.sqlState.codeClass == .integrityConstraintViolation)
        switch error.sqlState {
        case SQLState.Class.transactionRollback: Issue.record("23505 is not a transaction rollback")
        case SQLState.Class.integrityConstraintViolation: break
        default: Issue.record("23505 did not match its class")
        }
        func caught(_ thrown: any Error) -> String {
            do {
                throw thrown
            } catch SQLState.uniqueViolation {
                return "unique"
            } catch SQLState.Class.integrityConstraintViolation {
                return "integrity"
            } catch {
                return "other"
            }
        }
        #expect(caught(error) == "unique")
        #expect(caught(DatabaseError(fields: ["C": "23503", "M": "fk"], sql: "x")) == "integrity")
        #expect(caught(DatabaseError(fields: ["C": "40001", "M": "retry"], sql: "x")) == "other")
        #expect(caught(CancellationError()) == "other")
    }

    @Test func descriptionNamesTheErrorButNoValues() {
        let error = DatabaseError(fields: Self.uniqueViolationFields, sql: "insert into person (email) values ($1)")
        let text = error.description
        #expect(text.hasPrefix("ERROR 23505: duplicate key value violates unique constraint"))
        #expect(text.contains("constraint: person_email_key"))
        #expect(text.contains("table: person"))
        #expect(text.contains("insert into person (email) values ($1)"))
        #expect(!text.contains("bob@example.com"))
    }

    @Test func unknownCodesAreKeptAndClassified() {
        let state = SQLState(rawValue: "XY123")
        #expect(state.rawValue == "XY123")
        #expect(state.errorClass == "XY")
        #expect(!state.isConnectionError)
        #expect(SQLState(rawValue: "08001").isConnectionError)
        #expect(SQLState.adminShutdown.isConnectionError)
        #expect(SQLState.cannotConnectNow.isConnectionError)
        #expect(!SQLState.queryCanceled.isConnectionError)
        #expect(SQLState.serializationFailure.isRetryableTransactionError)
        #expect(SQLState.deadlockDetected.isRetryableTransactionError)
        #expect(!SQLState.uniqueViolation.isRetryableTransactionError)
    }

    @Test func missingFieldsGetDefaults() {
        let error = DatabaseError(fields: [:])
        #expect(error.sqlState.rawValue == "XX000")
        #expect(error.severity == "ERROR")
        #expect(error.sql == nil)
    }

    @Test func clientErrorsDescribeTheirCode() {
        let error = LibPQError(.commitOutcomeUnknown, "lost during COMMIT")
        #expect(error.description == "commitOutcomeUnknown: lost during COMMIT")
        #expect(error.code != .connectionLost)
        let pipeline = PipelineError(index: 3, error: DatabaseError(fields: Self.uniqueViolationFields))
        #expect(pipeline.description.hasPrefix("pipeline statement 3 failed: ERROR 23505"))
    }
}
