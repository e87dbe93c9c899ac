@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import Testing

/// Merge policies (issue 32, point 1): a context whose save finds a row another writer moved on merges it per
/// Core Data's five policies, property by property, and saves again; the struct saved takes what was stored.
/// The same on both stores.
@Suite struct MergePolicyTests {
    /// What the row holds after: this context changed `department` and `job`, another writer `age` and
    /// `department` first.
    static let expected: [MergePolicy: (age: Int16, department: String, job: String)] = [
        .mergeByPropertyStoreTrump: (31, "Ops", "buyer"),
        .mergeByPropertyObjectTrump: (31, "Support", "buyer"),
        .overwrite: (30, "Support", "buyer"),
        .rollback: (31, "Ops", "seller"),
        .error: (31, "Ops", "seller"),
    ]

    static func employee(_ store: any Store, _ id: ManagedObjectID?) throws -> Employee {
        let found: [Employee] = try Employee.query(ManagedObjectContext(store: store), predicate: nil)
        return try #require(found.first { $0.objectID == id })
    }

    /// Disjoint and overlapping attributes under one policy.
    static func attributes(_ store: any Store, _ policy: MergePolicy) throws {
        var seeded = Employee(name: "Ann", age: 30, position: "lead", department: "Sales", job: "seller")
        try seeded.save(ManagedObjectContext(store: store))
        let mine = ManagedObjectContext(store: store)
        mine.mergePolicy = policy
        var ours = try employee(store, seeded.objectID)
        _ = try ours.toObject(mine)
        // Another writer first.
        var theirs = try employee(store, seeded.objectID)
        theirs.age = 31
        theirs.department = "Ops"
        try theirs.save(ManagedObjectContext(store: store))

        ours.department = "Support"
        ours.job = "buyer"
        let expected = try #require(expected[policy])
        if policy == .error {
            #expect(throws: CVManagedStructError.self) { try ours.save(mine) }
        } else {
            try ours.save(mine)
            // The struct saved holds what was stored.
            #expect(ours.age == expected.age && ours.department == expected.department && ours.job == expected.job)
        }
        let stored = try employee(store, seeded.objectID)
        #expect(
            (stored.age, stored.department, stored.job) == (expected.age, expected.department, expected.job),
            "\(policy)")
        #expect(stored.position == "lead")
        // Merged or not, the row is readable and saves again from a fresh read.
        var again = stored
        again.job = "clerk"
        try again.save(ManagedObjectContext(store: store))
    }

    /// A member list: another writer reorders it; this context renames the company, or changes the list too.
    static func relationships(_ store: any Store) throws {
        var company = Company(
            name: "Acme",
            employees: [
                Employee(name: "E1", age: 20, position: nil, department: "D", job: "j"),
                Employee(name: "E2", age: 21, position: nil, department: "D", job: "j"),
            ])
        try company.save(ManagedObjectContext(store: store))
        func stored() throws -> Company {
            let found: [Company] = try Company.query(ManagedObjectContext(store: store), predicate: nil)
            return try #require(found.first { $0.objectID == company.objectID })
        }
        func names(_ company: Company) -> [String] { company.employees.map(\.name) }
        for (policy, changesList, expectedName, expectedOrder) in [
            (MergePolicy.mergeByPropertyStoreTrump, false, "Acme 2", ["E2", "E1"]),
            (.mergeByPropertyObjectTrump, true, "Acme 2", ["E1"]),
            (.mergeByPropertyStoreTrump, true, "Acme 2", ["E2", "E1"]),
            (.overwrite, false, "Acme 2", ["E1", "E2"]),
            (.rollback, true, "Acme", ["E2", "E1"]),
        ] {
            // Back to Acme, [E1, E2].
            var reset = try stored()
            reset.name = "Acme"
            reset.employees.sort { $0.name < $1.name }
            if reset.employees.count < 2 { reset.employees = company.employees }
            // `company.employees` were read at their first save: a save of them is checked against that
            // version (their objectIDs carry it) and conflicts with the saves since, unless it overwrites.
            let resetting = ManagedObjectContext(store: store)
            resetting.mergePolicy = .overwrite
            try reset.save(resetting)

            let mine = ManagedObjectContext(store: store)
            mine.mergePolicy = policy
            var ours = try stored()
            _ = try ours.toObject(mine)
            var theirs = try stored()
            theirs.employees.reverse()
            try theirs.save(ManagedObjectContext(store: store))

            ours.name = "Acme 2"
            if changesList { ours.employees.removeLast() }
            try ours.save(mine)
            let after = try stored()
            #expect(after.name == expectedName, "\(policy) \(changesList)")
            #expect(names(after) == expectedOrder, "\(policy) \(changesList)")
            #expect(names(ours) == expectedOrder, "\(policy) \(changesList): the struct takes what was stored")
        }
    }

    /// Read-modify-write counters from several threads, each retrying its conflicts under `.error`: no
    /// increment is lost.
    static func counters(_ store: any Store) throws {
        var seeded = Employee(name: "Counter", age: 0, position: nil, department: "D", job: "j")
        try seeded.save(ManagedObjectContext(store: store))
        let id = seeded.objectID
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<10 {
                var done = false
                for _ in 0..<200 where !done {
                    do {
                        // Read and saved in one context: the save is checked against the version read.
                        let context = ManagedObjectContext(store: store)
                        let found: [Employee] = try Employee.query(context, predicate: nil)
                        guard var row = found.first(where: { $0.objectID == id }) else {
                            failures.add("the counter row is gone")
                            return
                        }
                        row.age += 1
                        try row.save(context)
                        done = true
                    } catch let error as CVManagedStructError where error.code == .conflict {
                        continue
                    } catch {
                        failures.add("\(error)")
                        return
                    }
                }
                if !done { failures.add("an increment never got through") }
            }
        }
        #expect(failures.all.isEmpty)
        #expect(try employee(store, id).age == 40)
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ failure: String) { lock.withLock { list.append(failure) } }
        var all: [String] { lock.withLock { list } }
    }

    @Test(arguments: MergePolicy.allCases) func memoryStoreMergesAttributes(policy: MergePolicy) throws {
        try Self.attributes(MemoryStore(model: ExampleModel.model), policy)
    }

    @Test func memoryStoreMergesRelationshipsAndCounts() throws {
        try Self.relationships(MemoryStore(model: ExampleModel.model))
        try Self.counters(MemoryStore(model: ExampleModel.model))
    }

    /// The same conflict between two OS processes: a worker reads Ann with a policy, this process saves the
    /// other writer's change, the worker saves; the row and the worker's struct are what the policy says.
    @Test(arguments: MergePolicy.allCases) func twoProcessesMerge(policy: MergePolicy) throws {
        try TestDatabase.withExampleStore { store, url, schema in
            var seeded = Employee(name: "Ann", age: 30, position: "lead", department: "Sales", job: "seller")
            try seeded.save(ManagedObjectContext(store: store))
            let worker = try ConcurrentProcessTests.Worker(["merge", url, schema, policy.rawValue, "Ann"])
            #expect(try worker.readLine() == "read")
            var theirs = try Self.employee(store, seeded.objectID)
            theirs.age = 31
            theirs.department = "Ops"
            try theirs.save(ManagedObjectContext(store: store))
            try worker.send("go")
            let line = try worker.readLine()
            let status = worker.finish()
            let expected = try #require(Self.expected[policy])
            if policy == .error {
                #expect(line.hasPrefix("error") && line.contains("conflict"), "\(line)")
                #expect(status != 0)
            } else {
                #expect(line == "saved \(expected.age) \(expected.department) \(expected.job)")
                #expect(status == 0)
            }
            let stored = try Self.employee(store, seeded.objectID)
            #expect((stored.age, stored.department, stored.job) == (expected.age, expected.department, expected.job))
        }
    }

    /// The async save merges as the synchronous one does.
    @Test func anAsyncSaveMerges() async throws {
        let store = MemoryStore(model: ExampleModel.model)
        var seeded = Employee(name: "Ann", age: 30, position: "lead", department: "Sales", job: "seller")
        try await seeded.save(ManagedObjectContext(store: store))
        let mine = ManagedObjectContext(store: store)
        mine.mergePolicy = .mergeByPropertyStoreTrump
        let found: [Employee] = try await Employee.query(mine, predicate: nil)
        var ours = try #require(found.first)
        var theirs = ours
        theirs.age = 31
        theirs.department = "Ops"
        try await theirs.save(ManagedObjectContext(store: store))
        ours.department = "Support"
        ours.job = "buyer"
        try await ours.save(mine)
        #expect((ours.age, ours.department, ours.job) == (31, "Ops", "buyer"))
    }

    @Test func postgresMerges() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            for policy in MergePolicy.allCases { try Self.attributes(store, policy) }
            try Self.relationships(store)
            try Self.counters(store)
        }
    }
}
