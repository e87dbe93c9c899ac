@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
@testable import CoreValuePostgres
import Foundation
import Testing

/// A write transaction whose connection was lost before its `COMMIT` was sent is run again on a new
/// connection. But the old backend may still be inside the transaction: after a network partition that made
/// the client give up on the connection, the server has not noticed the client is gone, and the backend
/// waits for input holding the row locks of the statements it ran, until the server's TCP keepalive ends it
/// (two hours with the kernel's defaults). Found by `make test-faults` (its partition run hung): the store now
/// ends that backend before the transaction runs again (`AbandonedAttempt`). The proxy of
/// ``CommitCuttingProxy`` keeps the cut connection's server side open, so the old backend waits as after a
/// partition; a statement timeout turns a wait on its locks into an error. Part of ``CommitResolutionTests``
/// (its proxy, and its reason to be skipped behind pgbouncer in `make test-ha`).
extension CommitResolutionTests {
    @Test func aSaveRunAgainAfterItsConnectionWasLostMidTransactionDoesNotWaitOnItsOwnLocks() throws {
        try Self.withProxiedStore(configure: { $0.statementTimeout = .seconds(2) }) {
            store, direct, proxy in
            var company = Company(name: "Acme", employees: [])
            try company.save(ManagedObjectContext(store: direct))
            let context = ManagedObjectContext(store: store)
            var read = try #require((try Company.query(context, predicate: nil) as [Company]).first)
            read.employees.append(Employee(name: "Ann", age: 30, position: nil, department: "R&D", job: "dev"))
            // The company's row is updated (and locked) first; the connection is cut at its member list's rows.
            proxy.arm(.beforeStatement("\"Company_employees\""))
            try read.save(context)
            #expect(proxy.cuts == 1)
            let reader = ManagedObjectContext(store: direct)
            let stored = try #require((try Company.query(reader, predicate: nil) as [Company]).first)
            #expect(stored.employees.map(\.name) == ["Ann"])
        }
    }
}
