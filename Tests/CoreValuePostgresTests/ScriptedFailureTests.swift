@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
@testable import CoreValuePostgres
import Foundation
import LibPQ
import Synchronization
import Testing

/// A save's error paths against a scripted connection (`ScriptedSessions`), without a server: a connection
/// lost during a part of a streamed save or of its COPY, a lost `COMMIT` reply, a serialization failure on
/// the last statement, a result with an unexpected row count. Each ends in the documented error or a
/// retry, with nothing half-applied in the context.
@Suite struct ScriptedFailureTests {
    /// A store on the example model whose reads and writes go to `sessions`.
    static func store(
        _ sessions: ScriptedSessions, configure: (inout PostgresStore.Configuration) -> Void = { _ in }
    ) throws -> PostgresStore {
        var configuration = try PostgresStore.Configuration(url: "postgresql://nobody@127.0.0.1:1/none")
        configuration.maxAttempts = 3
        // These scripts answer the save's own statements; CommitResolutionScriptTests answer the commit
        // identifier and its lookup too.
        configuration.resolvesCommitOutcomes = false
        configure(&configuration)
        return try PostgresStore(model: try ExampleModel.make(), configuration: configuration, sessions: sessions)
    }

    /// A context holding one new product (a plain insert: one statement).
    static func contextWithNewProduct(_ store: PostgresStore) throws -> (ManagedObjectContext, ManagedObject) {
        let context = ManagedObjectContext(store: store)
        let product = try context.insert(entityName: "Product")
        try product.setValue(.int32(7), forKey: "id")
        try product.setValue(.string("seven"), forKey: "name")
        try product.setValue(.decimal(7), forKey: "price")
        return (context, product)
    }

    /// The rows an insert of products returns: a key and the first version per identifier it was sent.
    static func insertedProducts(_ parameters: [PostgresValue]) throws -> QueryResult {
        guard let ids = parameters.first(where: { $0.type == .int4Array }), let bytes = ids.bytes else {
            return try .inserted(0)
        }
        let values = try bytes.withUnsafeBytes { try [Int32].decode(from: $0, type: .int4Array) }
        return try .scripted(
            [("_pk", .int8), ("_version", .int8), ("id", .int4)],
            try values.map { [try PostgresValue(Int64($0) + 100), try PostgresValue(Int64(1)), try PostgresValue($0)] })
    }

    @Test func aLostCommitReplyIsThrownAsOutcomeUnknownNeverRetriedAndTheChangesStayPending() throws {
        let sessions = ScriptedSessions { call in
            if case .commit = call { throw LibPQError(.commitOutcomeUnknown, "the reply to COMMIT was lost") }
            return try .inserted(1)
        }
        let store = try Self.store(sessions)
        let (context, product) = try Self.contextWithNewProduct(store)
        #expect {
            try context.save()
        } throws: { error in
            // Its own code, with the driver's error behind it.
            let thrown = error as? PostgresStoreError
            return thrown?.code == .commitOutcomeUnknown
                && (thrown?.underlying as? LibPQError)?.code == .commitOutcomeUnknown
        }
        #expect(sessions.log.filter { $0 == "COMMIT" }.count == 1)
        #expect(store.statistics.retries == 0)
        #expect(context.hasChanges)
        #expect(product.objectID.isTemporary)
        #expect(context.insertedObjects.count == 1)
    }

    @Test func aSerializationFailureOnTheLastStatementRetriesTheWholeTransaction() throws {
        let notifies = Mutex(0)
        let sessions = ScriptedSessions { call in
            guard let sql = call.sql, sql.contains("pg_notify") else { return try .inserted(1) }
            // The first attempt's last statement fails as a serializable transaction can.
            let attempt = notifies.withLock { count in
                count += 1
                return count
            }
            if attempt == 1 { throw DatabaseError.scripted("40001", "could not serialize access") }
            return try .scripted([("pg_notify", .void)], [[PostgresValue(type: .void, bytes: [])]])
        }
        let store = try Self.store(sessions) { $0.notificationChannel = "changes" }
        let (context, product) = try Self.contextWithNewProduct(store)
        try context.save()
        #expect(sessions.log.filter { $0 == "BEGIN" }.count == 2)
        #expect(sessions.log.filter { $0 == "ROLLBACK" }.count == 1)
        #expect(sessions.log.filter { $0 == "COMMIT" }.count == 1)
        #expect(store.statistics.retries == 1)
        #expect(!context.hasChanges)
        #expect(!product.objectID.isTemporary)
    }

    @Test func serializationFailuresOnEveryAttemptEndInTheServersErrorWithTheChangesPending() throws {
        let sessions = ScriptedSessions { call in
            guard let sql = call.sql, sql.contains("pg_notify") else { return try .inserted(1) }
            throw DatabaseError.scripted("40001", "could not serialize access")
        }
        let store = try Self.store(sessions) { $0.notificationChannel = "changes" }
        let (context, product) = try Self.contextWithNewProduct(store)
        #expect {
            try context.save()
        } throws: { error in
            (error as? PostgresStoreError)?.sqlState == .serializationFailure
        }
        // maxAttempts is 3: three transactions, each rolled back, none committed.
        #expect(sessions.log.filter { $0 == "BEGIN" }.count == 3)
        #expect(sessions.log.filter { $0 == "ROLLBACK" }.count == 3)
        #expect(!sessions.log.contains("COMMIT"))
        #expect(context.hasChanges)
        #expect(product.objectID.isTemporary)
    }

    @Test func anInsertReturningTooFewRowsFailsTheSaveUnretriedWithTheChangesPending() throws {
        let sessions = ScriptedSessions { _ in try .inserted(0) }
        let store = try Self.store(sessions)
        let (context, product) = try Self.contextWithNewProduct(store)
        #expect {
            try context.save()
        } throws: { error in
            (error as? PostgresStoreError)?.code == .unexpectedResult
        }
        #expect(sessions.log == ["BEGIN", sessions.statements[0], "ROLLBACK"])
        #expect(context.hasChanges)
        #expect(product.objectID.isTemporary)
    }

    /// 5,000 products: a streamed `saveAll` of four parts (500, 2,000, 2,000, 500).
    static let products = (1...5_000).map { Product(id: Int32($0), name: "p\($0)", price: 1) }

    @Test func aConnectionLostDuringThePipelinedThirdPartIsRetriedWithThePartsHandedOverAgain() throws {
        let inserts = Mutex(0)
        let sessions = ScriptedSessions { call in
            guard case .statement(let sql, let parameters) = call else { return try .command("COMMIT") }
            // The probe: no stored row could share an identifier, so the parts go as plain inserts.
            if sql.hasPrefix("SELECT 1 FROM") { return try .scripted([("?column?", .int4)], []) }
            let insert = inserts.withLock { count in
                count += 1
                return count
            }
            if insert == 3 { throw LibPQError(.connectionLost, "server closed the connection unexpectedly") }
            return try Self.insertedProducts(parameters)
        }
        let store = try Self.store(sessions) { $0.writesThroughCopy = false }
        let context = ManagedObjectContext(store: store)
        try Self.products.saveAll(context)
        // The first attempt sent parts 1 and 2, lost the connection on part 3, still took part 4 from the
        // producer without sending it, and rolled back; the second sent all four and committed.
        #expect(inserts.withLock { $0 } == 3 + 4)
        #expect(sessions.log.filter { $0 == "BEGIN" }.count == 2)
        #expect(sessions.log.filter { $0 == "ROLLBACK" }.count == 1)
        #expect(store.statistics.retries == 1)
        #expect(!context.hasChanges)
        #expect(context.registeredObjects.count == 5_000)
        #expect(context.registeredObjects.allSatisfy { !$0.objectID.isTemporary })
    }

    @Test func aConnectionLostDuringTheCopyOfTheThirdPartIsRetriedAndAGiveUpLeavesNothingInTheContext() throws {
        let copies = Mutex(0)
        let failEveryAttempt = Mutex(false)
        let sessions = ScriptedSessions { call in
            switch call {
            case .statement(let sql, _) where sql.hasPrefix("SELECT 1 FROM"):
                return try .scripted([("?column?", .int4)], [])
            case .statement(let sql, _) where sql.contains("nextval"):
                return try .scripted(
                    [("array_agg", .int8Array)], [[try PostgresValue((1...5_000).map { Int64($0) })]])
            case .copyData:
                let part = copies.withLock { count in
                    count += 1
                    return count
                }
                if part == 3 || failEveryAttempt.withLock({ $0 }) {
                    throw LibPQError(.connectionLost, "server closed the connection unexpectedly")
                }
                return try .command("")
            case .copyEnd:
                return try .command("COPY 5000")
            default:
                return try .command("COMMIT")
            }
        }
        let store = try Self.store(sessions) { $0.failoverBudget = .zero }
        let context = ManagedObjectContext(store: store)
        try Self.products.saveAll(context)
        // Parts 1 and 2 copied, 3 lost (4 taken, not sent); then all four again.
        #expect(copies.withLock { $0 } == 3 + 4)
        #expect(sessions.log.filter { $0 == "ROLLBACK" }.count == 1)
        #expect(sessions.log.filter { $0 == "COMMIT" }.count == 1)
        #expect(!context.hasChanges)
        #expect(context.registeredObjects.count == 5_000)
        #expect(context.registeredObjects.allSatisfy { !$0.objectID.isTemporary })

        // A server that stays away: after the retry at once, the budget (none) is spent.
        failEveryAttempt.withLock { $0 = true }
        let other = ManagedObjectContext(store: store)
        #expect {
            try Self.products.saveAll(other)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .serverUnavailable
        }
        #expect(!other.hasChanges)
        #expect(other.registeredObjects.isEmpty)
    }

    /// Where a streamed COPY save loses its connection once.
    enum CopyFailure: String, CaseIterable, Sendable {
        case probe, reserveKeys, part1, part2, part4, copyEnd
    }

    @Test(arguments: CopyFailure.allCases)
    func aConnectionLostOnceAnywhereInAStreamedCopyIsRetriedToOneWholeSave(_ failure: CopyFailure) throws {
        let failed = Mutex(false)
        let parts = Mutex(0)
        @Sendable func lose(_ point: CopyFailure) throws {
            guard point == failure, !failed.withLock({ $0 }) else { return }
            failed.withLock { $0 = true }
            throw LibPQError(.connectionLost, "server closed the connection unexpectedly")
        }
        let sessions = ScriptedSessions { call in
            switch call {
            case .statement(let sql, _) where sql.hasPrefix("SELECT 1 FROM"):
                try lose(.probe)
                return try .scripted([("?column?", .int4)], [])
            case .statement(let sql, _) where sql.contains("nextval"):
                try lose(.reserveKeys)
                return try .scripted(
                    [("array_agg", .int8Array)], [[try PostgresValue((1...5_000).map { Int64($0) })]])
            case .copyData:
                let part = parts.withLock { count in
                    count += 1
                    return count
                }
                // Counted across attempts: only the first attempt's parts are numbered here.
                if let point = [1: CopyFailure.part1, 2: .part2, 4: .part4][part] { try lose(point) }
                return try .command("")
            case .copyEnd:
                try lose(.copyEnd)
                return try .command("COPY 5000")
            default:
                return try .command("COMMIT")
            }
        }
        let store = try Self.store(sessions) { $0.failoverBudget = .zero }
        let context = ManagedObjectContext(store: store)
        try Self.products.saveAll(context)
        #expect(failed.withLock { $0 })
        #expect(sessions.log.filter { $0 == "ROLLBACK" }.count == 1)
        #expect(sessions.log.filter { $0 == "COMMIT" }.count == 1)
        #expect(store.statistics.retries == 1)
        #expect(!context.hasChanges)
        #expect(context.registeredObjects.count == 5_000)
        #expect(Set(context.registeredObjects.map(\.objectID)).count == 5_000)
    }

    @Test func aLostCommitReplyOfAStreamedSaveIsThrownAndTheContextKeepsNoneOfItsObjects() throws {
        let sessions = ScriptedSessions { call in
            switch call {
            case .commit: throw LibPQError(.commitOutcomeUnknown, "the reply to COMMIT was lost")
            case .statement(let sql, let parameters) where !sql.hasPrefix("SELECT 1 FROM"):
                return try Self.insertedProducts(parameters)
            default: return try .scripted([("?column?", .int4)], [])
            }
        }
        let store = try Self.store(sessions) { $0.writesThroughCopy = false }
        let context = ManagedObjectContext(store: store)
        #expect {
            try Self.products.saveAll(context)
        } throws: { error in
            (error as? PostgresStoreError)?.code == .commitOutcomeUnknown
        }
        #expect(sessions.log.filter { $0 == "BEGIN" }.count == 1)
        #expect(!context.hasChanges)
        #expect(context.registeredObjects.isEmpty)
    }

    @Test(arguments: [true, false])
    func aPartThatDoesMoreThanInsertIsRefusedOnEitherRouteWithNothingCommitted(copies: Bool) throws {
        let sessions = ScriptedSessions { call in
            switch call {
            case .statement(let sql, _) where sql.hasPrefix("SELECT 1 FROM"):
                return try .scripted([("?column?", .int4)], [])
            case .statement(let sql, _) where sql.contains("nextval"):
                return try .scripted([("array_agg", .int8Array)], [[try PostgresValue([Int64(1)])]])
            default:
                return try .command("")
            }
        }
        let store = try Self.store(sessions) { $0.writesThroughCopy = copies }
        let upserts = StreamedUpserts(entityName: "Product", key: "id", lowest: .int32(1), count: 1)
        let update = ObjectChange(id: .permanent("Product", 1), version: 1, attributes: ["name": .string("x")])
        #expect {
            _ = try store.apply(upserts: upserts) { send in try send(ChangeSet(updates: [update])) }
        } throws: { error in
            (error as? CVManagedStructError)?.code == .invalidObject
        }
        #expect(!sessions.log.contains("COMMIT"))
        #expect(store.statistics.retries == 0)
    }
}
