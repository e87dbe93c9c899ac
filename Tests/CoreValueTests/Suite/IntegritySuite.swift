@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Data integrity: no torn unique rows, no relationship read as empty when it could not be loaded, deep input
/// refused with a typed error instead of a crash, one definition of case-insensitive matching.
enum IntegritySuite {
    static let cases: [SuiteCase] = [
        tornRows, unchangedUniqueWrite, releasedContext, deepPredicate, caseInsensitive, largePredicate,
    ]

    static let tornRows = SuiteCase("a unique struct's save leaves the row equal to that whole struct") { make, api in
        let store = try make()
        try await Product(id: 1, name: "v0", price: 1).save(ManagedObjectContext(store: store), via: api)
        let a = ManagedObjectContext(store: store)
        let b = ManagedObjectContext(store: store)
        // Both read the row; B saves first, then A, whose price equals the one it read.
        _ = try await Product.query(a, predicate: .key("id") == 1, via: api) as [Product]
        _ = try await Product.query(b, predicate: .key("id") == 1, via: api) as [Product]
        try await Product(id: 1, name: "vB", price: 2).save(b, via: api)
        try await Product(id: 1, name: "vA", price: 1).save(a, via: api)
        let read: [Product] = try await Product.query(ManagedObjectContext(store: store), predicate: nil, via: api)
        #expect(read == [Product(id: 1, name: "vA", price: 1)])
    }

    static let unchangedUniqueWrite = SuiteCase("saving an unchanged unique struct still writes it last") { make, api in
        let store = try make()
        let a = ManagedObjectContext(store: store)
        try await Product(id: 7, name: "mine", price: 5).save(a, via: api)
        try await Product(id: 7, name: "theirs", price: 6).save(ManagedObjectContext(store: store), via: api)
        // Nothing changed since A wrote it, but A's save is the last write: the row is A's struct again.
        try await Product(id: 7, name: "mine", price: 5).save(a, via: api)
        let read: [Product] = try await Product.query(ManagedObjectContext(store: store), predicate: nil, via: api)
        #expect(read == [Product(id: 7, name: "mine", price: 5)])
        // Saved unchanged again while the row is still at the version A wrote: nothing to write.
        func version() throws -> Int64? {
            let rows: [RowSnapshot] = try store.fetch(FetchRequest(entityName: "Product"))
            return rows.first?.version
        }
        let before = try version()
        try await Product(id: 7, name: "mine", price: 5).save(a, via: api)
        #expect(try version() == before)
        // Deleted by another writer meanwhile: saving the unchanged struct is a conflict on both stores, not a
        // silent success with no row.
        try await Product(id: 7, name: "mine", price: 5).delete(ManagedObjectContext(store: store), via: api)
        await #expect {
            try await Product(id: 7, name: "mine", price: 5).save(a, via: api)
        } throws: { error in
            // The seed's style of match, on the error's code.
            if case CVManagedStructError.conflict = error { return true }
            return false
        }
    }

    static let releasedContext = SuiteCase(
        "a relationship of an object whose context was released throws, and nothing is unlinked"
    ) { make, api in
        let store = try make()
        var company = Company(
            name: "Folder",
            employees: (1...5).map { Employee(name: "Doc \($0)", age: 30, position: nil, department: "D", job: "J") })
        try await company.save(ManagedObjectContext(store: store), via: api)
        let id = try #require(company.objectID)
        // The helper returns the object and releases its context at once.
        func detachedObject() async throws -> ManagedObject {
            try await ManagedObjectContext(store: store).existingObject(with: id, via: api)
        }
        let object = try await detachedObject()
        // The object reads its context as gone (its handle was cleared when the context was freed).
        #expect(object.managedObjectContext == nil)
        #expect(try object.value(forKey: "name", as: String.self) == "Folder")
        #expect(throws: CVManagedStructError.relationshipUnavailable(entity: "Company", key: "employees")) {
            _ = try Company.fromObject(object)
        }
        #expect(throws: CVManagedStructError.relationshipUnavailable(entity: "Company", key: "employees")) {
            _ = try object.objects(forKey: "employees")
        }
        let reader = ManagedObjectContext(store: store)
        let stored = try Company.fromObject(try await reader.existingObject(with: id, via: api))
        let employee = try await ManagedObjectContext(store: store).existingObject(
            with: try #require(stored.employees.first?.objectID), via: api)
        #expect(throws: CVManagedStructError.relationshipUnavailable(entity: "Employee", key: "company")) {
            _ = try employee.object(forKey: "company")
        }
        let fresh = ManagedObjectContext(store: store)
        let read = try Company.fromObject(try await fresh.existingObject(with: id, via: api))
        #expect(read.employees.map(\.name) == (1...5).map { "Doc \($0)" })
    }

    static let deepPredicate = SuiteCase(
        "a predicate nested deeper than the limit is a typed error, even on a small stack"
    ) { make, api in
        let store = try make()
        var stored = Employee(name: "A", age: 30, position: nil, department: "D", job: "J")
        try await stored.save(ManagedObjectContext(store: store), via: api)
        // The predicate is built and freed on a thread with a large stack: freeing a value nested 15,000 levels
        // deep recurses in the runtime itself, whoever built it. The store's work runs on a small one, through
        // the synchronous API in both modes: the async API would run it on a thread of the store's.
        let (depth, tooDeep, fits) = try SmallStack.run(size: 64 * 1024 * 1024) { () -> (Int, Error?, Int) in
            var deep: CVPredicate = .key("age") == 30
            for level in 0..<15_000 { deep = level % 2 == 0 ? !deep : .and([deep, .true]) }
            var atLimit: CVPredicate = .key("age") == 30
            for _ in 0..<(CVPredicate.maximumDepth / 2) { atLimit = !(!atLimit) }
            let (tooDeepPredicate, limitPredicate) = (deep, atLimit)
            let (caught, found) = try SmallStack.run { () -> (Error?, Int) in
                var caught: Error?
                do {
                    _ =
                        try Employee.query(ManagedObjectContext(store: store), predicate: tooDeepPredicate)
                        as [Employee]
                } catch { caught = error }
                // With a pending change the predicate is also evaluated in memory.
                let context = ManagedObjectContext(store: store)
                var pending = Employee(name: "B", age: 30, position: nil, department: "D", job: "J")
                _ = try pending.mutatingToObject(context)
                let found: [Employee] = try Employee.query(context, predicate: limitPredicate)
                return (caught, found.count)
            }
            return (deep.depth + atLimit.depth, caught, found)
        }
        #expect(depth == 15_000 + CVPredicate.maximumDepth)
        #expect(
            (tooDeep as? CVManagedStructError)
                == .nestingTooDeep(entity: "Employee", what: "a predicate", limit: CVPredicate.maximumDepth))
        #expect(fits == 2)
    }

    /// A predicate from a request's input must not hold a backend for a minute: a long `OR` is refused
    /// before anything is sent, a list of any length is one `IN`.
    static let largePredicate = SuiteCase("a predicate of more terms than the limit is a typed error; in() is one term")
    { make, api in
        let store = CountingStore(try make())
        var staff = (0..<5).map { Fixtures.employee("E\($0)", age: Int16(20 + $0)) }
        try await staff.saveAll(ManagedObjectContext(store: store), via: api)
        store.reset()
        let ages = (0..<70_000).map { Int16(truncatingIfNeeded: $0) }
        let huge = CVPredicate.or(ages.map { .comparison(key: "age", .equal, .int16($0)) })
        await #expect(throws: CVManagedStructError.predicateTooLarge(entity: "Employee", terms: 70_000, limit: 1_000)) {
            let _: [Employee] = try await Employee.query(ManagedObjectContext(store: store), predicate: huge, via: api)
        }
        #expect(store.count("fetch") == 0)
        // At the limit it runs; the same values as one IN list, whatever their number, too.
        let atLimit = CVPredicate.or(
            ages.prefix(CVPredicate.maximumTerms).map { .comparison(key: "age", .equal, .int16($0)) })
        #expect(atLimit.termCount == CVPredicate.maximumTerms)
        let found: [Employee] = try await Employee.query(
            ManagedObjectContext(store: store), predicate: atLimit, via: api)
        #expect(found.count == 5)
        let listed: [Employee] = try await Employee.query(
            ManagedObjectContext(store: store), predicate: CVPredicate.key("age").in(ages), via: api)
        #expect(listed.count == 5)
    }

    static let caseInsensitive = SuiteCase("case-insensitive matches of non-ASCII text follow one definition") {
        make, api in
        let store = try make()
        let names = [
            "İstanbul", "istanbul", "ISTANBUL", "ıspanak", "Iris", "i\u{307}ki", "Straße", "STRASSE", "ΟΔΟΣ",
            "\u{3BF}\u{3B4}\u{3BF}\u{3C3}", "ΣΟΦΙΑ", "Ǆemal", "ǆemal", "Ärger", "ärger", "cafe\u{301}",
            "x%\u{301}y",
        ]
        var staff = names.map { Employee(name: $0, age: 30, position: nil, department: "D", job: "J") }
        try await staff.saveAll(ManagedObjectContext(store: store), via: api)
        func matching(_ fragment: String, _ match: CVPredicate.StringMatch = .contains) async throws -> [String] {
            let predicate = CVPredicate.stringMatch(key: "name", match, fragment, caseInsensitive: true)
            let read: [Employee] = try await Employee.query(
                ManagedObjectContext(store: store), predicate: predicate, sortDescriptors: [.init(key: "name")],
                via: api)
            return read.map(\.name)
        }
        // `İ` lower-cases to `i` + U+0307: it matches only the dotted forms, never plain `i` or `I`.
        #expect(try await matching("İ") == ["i\u{307}ki", "İstanbul"])
        #expect(try await matching("ı") == ["ıspanak"])
        #expect(try await matching("ärg") == ["Ärger", "ärger"])
        #expect(try await matching("ǅ") == ["Ǆemal", "ǆemal"])
        // A final capital sigma lower-cases to `ς`, any other to `σ`.
        #expect(try await matching("ς", .endsWith) == ["ΟΔΟΣ"])
        #expect(try await matching("σοφ", .beginsWith) == ["ΣΟΦΙΑ"])
        // No full case folding: `ß` is not `ss`.
        #expect(try await matching("ss") == ["STRASSE"])
        // A `%` carrying a combining mark is still matched literally (escaped per scalar, not per Character).
        #expect(try await matching("%\u{301}") == ["x%\u{301}y"])
    }
}

/// Runs work on a thread with a small stack (512 KiB, the size of a secondary thread on macOS, unless told), so that a test notices recursion on input
/// depth.
enum SmallStack {
    static func run<T: Sendable>(size: Int = 512 * 1024, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        // The thread lets go of `body` before it signals, while the caller still holds it: whatever `body`
        // captured (a predicate nested 15,000 levels deep) is then never freed on the small stack, however
        // late the thread object itself goes away.
        let work = BodyBox(body)
        let thread = Thread {
            if let body = work.take() { box.result = Result { try body() } }
            done.signal()
        }
        thread.stackSize = size
        thread.start()
        done.wait()
        guard let result = box.result else { throw CancellationError() }
        return try result.get()
    }

    private final class ResultBox<T>: @unchecked Sendable {
        var result: Result<T, Error>?
    }

    private final class BodyBox<T>: @unchecked Sendable {
        private var body: (@Sendable () throws -> T)?
        init(_ body: @escaping @Sendable () throws -> T) { self.body = body }
        func take() -> (@Sendable () throws -> T)? {
            defer { body = nil }
            return body
        }
    }
}
