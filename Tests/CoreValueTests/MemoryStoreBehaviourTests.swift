@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// The store-generic behaviour suite against `MemoryStore`, through both APIs.
@Test(arguments: StoreSuite.all, APIMode.allCases)
func memoryStoreBehaviour(_ check: SuiteCase, _ api: APIMode) async throws {
    try await check.run({ MemoryStore(model: ExampleModel.model) }, api)
}

/// The history suite against `MemoryStore`, through both APIs.
@Test(arguments: HistorySuite.cases, APIMode.allCases)
func memoryStoreHistory(_ check: HistoryCase, _ api: APIMode) async throws {
    try await check.run({ MemoryStore(model: ExampleModel.model, recordsHistory: true, author: $0) }, api)
}

@Test func memoryStoreWithoutHistoryRefusesToRead() throws {
    let store = MemoryStore(model: ExampleModel.model)
    #expect(!store.recordsHistory)
    #expect { _ = try store.history(after: nil, limit: 10) } throws: { hasCode($0, .historyUnavailable) }
}

/// A token is plain data a reader keeps: one edited or corrupted so that its snapshot could not be
/// PostgreSQL's is refused when decoded, never read by.
@Test func aTokenWhoseSnapshotCannotBeIsRefusedWhenDecoded() throws {
    let store = MemoryStore(model: ExampleModel.model, recordsHistory: true)
    let token = try store.currentHistoryToken()
    let json = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
    #expect(try JSONDecoder().decode(HistoryToken.self, from: Data(json.utf8)) == token)
    let bad = [
        #"{"storeID":"s","base":{"xmin":9,"xmax":3,"inProgress":[]},"baseNumber":0,"#
            + #""batch":{"xmin":3,"xmax":3,"inProgress":[]},"after":0}"#,
        #"{"storeID":"s","base":{"xmin":3,"xmax":9,"inProgress":[12]},"baseNumber":0,"#
            + #""batch":{"xmin":3,"xmax":9,"inProgress":[]},"after":0}"#,
        #"{"storeID":"s","base":{"xmin":3,"xmax":9,"inProgress":[4,4]},"baseNumber":0,"#
            + #""batch":{"xmin":3,"xmax":9,"inProgress":[]},"after":0}"#,
    ]
    for text in bad {
        #expect(throws: DecodingError.self) { _ = try JSONDecoder().decode(HistoryToken.self, from: Data(text.utf8)) }
    }
}

/// The entity inheritance suite against `MemoryStore`, through both APIs.
@Test(arguments: InheritanceSuite.cases, APIMode.allCases)
func memoryStoreInheritance(_ check: SuiteCase, _ api: APIMode) async throws {
    try await check.run({ MemoryStore(model: InheritanceSuite.model) }, api)
}

/// History of a hierarchy's objects in `MemoryStore`.
@Test func memoryStoreRecordsTheHistoryOfAHierarchy() throws {
    try InheritanceSuite.checkHistory(MemoryStore(model: InheritanceSuite.model, recordsHistory: true))
}
