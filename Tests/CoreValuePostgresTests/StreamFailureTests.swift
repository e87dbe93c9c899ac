@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Testing

/// A stream whose connection dies after it handed out a batch throws, and never hands a batch out twice
/// (retrying would start the cursor again from the first row).
@Test func aStreamThatLosesItsConnectionAfterABatchThrowsAndRepeatsNothing() throws {
    try TestDatabase.withExampleStore { store, url, schema in
        try (0..<5).map { Author(id: "a\($0)", name: "A") }.saveAll(ManagedObjectContext(store: store))
        // A store of its own, named, so that only its connection is terminated (tests run in parallel).
        let name = "cv_stream_\(schema)"
        let separator = url.contains("?") ? "&" : "?"
        let streaming = try PostgresStore(
            model: ExampleModel.model,
            configuration: try .init(url: url + separator + "application_name=\(name)", schema: schema).with {
                $0.poolSize = 1
            })
        defer { streaming.close() }
        var batches: [[String]] = []
        #expect(throws: (any Error).self) {
            try streaming.fetch(
                FetchRequest(entityName: "Author", sortDescriptors: [CVSortDescriptor(key: "id")]), batchSize: 1
            ) { batch in
                batches.append(batch.compactMap { $0.attributes["id"].flatMap(String.init(attributeValue:)) })
                if batches.count == 1 {
                    try TestDatabase.execute(
                        url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)'"
                    )
                }
                return true
            }
        }
        #expect(batches == [["a0"]])
    }
}
