@_spi(StoreImplementation) @testable import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Contexts over one store share its model index, and with it the boxing plans of each struct type: a
/// context made per request does not build them again. A store that does not share its index (one of
/// users' own) gives each context an index of its own, as before.
@Suite struct SharedPlansTests {
    @Test func contextsOverOneStoreShareTheIndexAndThePlans() throws {
        let store = MemoryStore(model: ExampleModel.model)
        let first = ManagedObjectContext(store: store)
        let key = ObjectIdentifier(Employee.self)
        #expect(store.sharedIndex.plans.plan(for: key) == nil)
        try Fixtures.employee("Ann").toObject(first)
        let built = try #require(store.sharedIndex.plans.plan(for: key))
        #expect(first.layouts.keptPlan(for: key) === built)

        let second = ManagedObjectContext(store: store)
        #expect(second.index === first.index)
        #expect(second.layouts.keptPlan(for: key) == nil)
        let bob = try Fixtures.employee("Bob", age: 41).toObject(second)
        #expect(second.layouts.keptPlan(for: key) === built)
        // The shared plan boxes as a plan of the context's own would.
        #expect(try bob.value(forKey: "name") == .string("Bob"))
        #expect(try bob.value(forKey: "age") == .int16(41))
    }

    /// A context keeps its one type's plan as the last one looked up only; a second type moves the first's
    /// into its table, and each is found again, the same plan.
    @Test func aContextBoxingSeveralTypesKeepsEachTypesPlan() throws {
        let store = MemoryStore(model: ExampleModel.model)
        // The plans built once, by another context.
        try Fixtures.employee("Eve").toObject(ManagedObjectContext(store: store))
        try Fixtures.car("Mini").toObject(ManagedObjectContext(store: store))
        let context = ManagedObjectContext(store: store)
        let employee = ObjectIdentifier(Employee.self)
        let car = ObjectIdentifier(Car.self)
        try Fixtures.employee("Ann").toObject(context)
        let employeePlan = try #require(context.layouts.keptPlan(for: employee))
        #expect(context.layouts.keyPathPlans.isEmpty)
        try Fixtures.car().toObject(context)
        let carPlan = try #require(context.layouts.keptPlan(for: car))
        #expect(context.layouts.keyPathPlans[employee] === employeePlan)
        let bob = try Fixtures.employee("Bob", age: 41).toObject(context)
        #expect(context.layouts.keptPlan(for: employee) === employeePlan)
        #expect(context.layouts.keptPlan(for: car) === carPlan)
        #expect(try bob.value(forKey: "age") == .int16(41))
        try Fixtures.car("Golf").toObject(context)
        #expect(context.layouts.keptPlan(for: car) === carPlan)
    }

    @Test func contextsOnManyThreadsShareOnePlanPerType() throws {
        let store = MemoryStore(model: ExampleModel.model)
        let plans = LockedList<ObjectIdentifier?>()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let context = ManagedObjectContext(store: store)
            do {
                try Fixtures.employee("E\(worker)").toObject(context)
                plans.append(context.layouts.keptPlan(for: ObjectIdentifier(Employee.self)).map(ObjectIdentifier.init))
            } catch {
                plans.append(nil)
            }
        }
        let shared = try #require(store.sharedIndex.plans.plan(for: ObjectIdentifier(Employee.self)))
        // Each context kept a plan; the index keeps the first one built, which later contexts then use.
        #expect(plans.values.count == 8)
        #expect(plans.values.allSatisfy { $0 != nil })
        let late = ManagedObjectContext(store: store)
        try Fixtures.employee("Late").toObject(late)
        #expect(late.layouts.keptPlan(for: ObjectIdentifier(Employee.self)) === shared)
    }

    @Test func aStoreThatDoesNotShareItsIndexGivesEachContextItsOwn() throws {
        let store = CountingStore(MemoryStore(model: ExampleModel.model))
        let first = ManagedObjectContext(store: store)
        let second = ManagedObjectContext(store: store)
        #expect(first.index !== second.index)
        try Fixtures.employee("Ann").toObject(first)
        try Fixtures.employee("Bob").toObject(second)
        let key = ObjectIdentifier(Employee.self)
        #expect(first.layouts.keptPlan(for: key) !== second.layouts.keptPlan(for: key))
    }
}

/// A list several threads append to.
private final class LockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    func append(_ item: Element) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }

    var values: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
