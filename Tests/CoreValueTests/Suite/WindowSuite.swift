@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// Windows from a request's numbers: a page size or offset often comes straight from an HTTP request, so no
/// value a caller can pass may trap, overflow or make the fetch reserve room for rows that cannot come.
enum WindowSuite {
    /// The numbers a request can carry at the edges: none may trap.
    static let edges = [Int.max, Int.max - 1, 1_000_000_000, 0]

    /// What a window of the six employees sorted by name keeps.
    static func expected(limit: Int, offset: Int) -> [String] {
        let names = ["Ann", "Cid", "Dora", "Eve", "Fay", "bob"]
        return Array(names.dropFirst(offset).prefix(limit))
    }

    static let cases: [SuiteCase] = [
        SuiteCase("any fetch limit and offset is a window, in a fresh context and one with pending changes") {
            make, api in
            let store = try await QuerySuite.staff(make, via: api)
            let byName = [CVSortDescriptor(key: "name")]
            for limit in edges {
                for offset in edges {
                    let fresh: [Employee] = try await Employee.query(
                        ManagedObjectContext(store: store), predicate: nil, sortDescriptors: byName,
                        fetchLimit: limit, fetchOffset: offset, via: api)
                    #expect(
                        fresh.map(\.name) == expected(limit: limit, offset: offset), "limit \(limit) offset \(offset)")
                    let stored: [Employee] = try await Employee.queryStored(
                        store, predicate: nil, sortDescriptors: byName, fetchLimit: limit, fetchOffset: offset,
                        via: api)
                    #expect(stored.map(\.name) == expected(limit: limit, offset: offset))
                    // Pending changes widen the store's window by the changed and deleted objects: the sum of a
                    // request's offset, limit and those counts must not overflow.
                    let pending = ManagedObjectContext(store: store)
                    let all: [Employee] = try await Employee.query(pending, predicate: nil, via: api)
                    var renamed = try #require(all.first { $0.name == "Eve" })
                    renamed.name = "Abe"
                    try await renamed.toObject(pending, via: api)
                    let merged: [Employee] = try await Employee.query(
                        pending, predicate: nil, sortDescriptors: byName, fetchLimit: limit, fetchOffset: offset,
                        via: api)
                    let names = ["Abe", "Ann", "Cid", "Dora", "Fay", "bob"]
                    #expect(merged.map(\.name) == Array(names.dropFirst(offset).prefix(limit)))
                    let request = FetchRequest(
                        entityName: "Employee", sortDescriptors: byName, fetchLimit: limit, fetchOffset: offset)
                    #expect(try store.count(request) == expected(limit: limit, offset: offset).count)
                }
            }
        },
        SuiteCase("a fetch by identifiers with a huge limit reserves for the identifiers only") { make, api in
            let store = try await QuerySuite.staff(make, via: api)
            let predicate = CVPredicate.key("name").in(["Ann", "Eve", "Nobody"])
            for limit in edges {
                let read: [Employee] = try await Employee.query(
                    ManagedObjectContext(store: store), predicate: predicate,
                    sortDescriptors: [CVSortDescriptor(key: "name")], fetchLimit: limit, via: api)
                #expect(read.map(\.name) == Array(["Ann", "Eve"].prefix(limit)))
            }
        },
        SuiteCase("a stream takes any batch size") { make, api in
            let store = try await QuerySuite.staff(make, via: api)
            for size in edges + [1] {
                var names: [String] = []
                var batches = 0
                switch api {
                case .sync:
                    try Employee.stream(store, predicate: nil, sortDescriptors: [.init(key: "name")], batchSize: size) {
                        (batch: [Employee]) in
                        batches += 1
                        names += batch.map(\.name)
                    }
                case .async:
                    let stream: StructStream<Employee> = Employee.stream(
                        store, predicate: nil, sortDescriptors: [.init(key: "name")], batchSize: size)
                    for try await employee in stream { names.append(employee.name) }
                    batches = size <= 1 ? 6 : 1
                }
                #expect(names == expected(limit: .max, offset: 0), "batch size \(size)")
                // A batch size below one is one.
                #expect(batches == (size <= 1 ? 6 : 1), "batch size \(size)")
            }
        },
    ]
}
