@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Testing

/// `PostgresStore.fetch` applies the same request checks as `MemoryStore` and contexts, before any statement.
@Suite struct DirectFetchValidationTests {
    @Test(arguments: [
        CVPredicate.comparison(key: "price", .greaterThan, .double(1.1)),  // numeric from a float: lossy
        .comparison(key: "doors", .equal, .int64(5_000_000_000)),  // integer from a too-large bigint
        .comparison(key: "nope", .equal, .int32(1)),  // unknown key
        .stringMatch(key: "name", .like, "a\\", caseInsensitive: false),  // dangling escape
    ])
    func aBadRequestThrowsTheSharedErrorBeforeAnyStatement(_ predicate: CVPredicate) throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let memory = MemoryStore(model: ExampleModel.model)
            let request = FetchRequest(entityName: "Car", predicate: predicate)
            let before = store.statistics.statements
            var postgresError: CVManagedStructError?
            var memoryError: CVManagedStructError?
            do { _ = try store.fetch(request) } catch let error as CVManagedStructError { postgresError = error }
            do { _ = try memory.fetch(request) } catch let error as CVManagedStructError { memoryError = error }
            #expect(postgresError != nil)
            #expect(postgresError == memoryError)
            #expect(store.statistics.statements == before)
        }
    }

    @Test func aLookupByValuesRefusesALossyValueLikeMemoryStore() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let memory = MemoryStore(model: ExampleModel.model)
            let values: [AttributeValue] = [.double(1.1)]  // numeric from a binary float: lossy
            var postgresError: CVManagedStructError?
            var memoryError: CVManagedStructError?
            do { _ = try store.fetch(entityName: "Product", key: "price", values: values) } catch let error
                as CVManagedStructError
            { postgresError = error }
            do { _ = try memory.fetch(entityName: "Product", key: "price", values: values) } catch let error
                as CVManagedStructError
            { memoryError = error }
            #expect(postgresError != nil)
            #expect(postgresError == memoryError)
        }
    }
}
