@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// Stores opened with a `notificationChannel` announce each committed save; `ChangeListener` receives them.
@Suite struct ChangeNotificationTests {
    /// A store on a fresh migrated schema with a channel unique to the test, and a second store (another
    /// "process") on the same schema and channel.
    private func withStores(
        _ function: String = #function, _ body: (PostgresStore, PostgresStore, ChangeListener) throws -> Void
    ) throws {
        try TestDatabase.withExampleStore(function) { _, url, schema in
            let channel = "cv_" + schema
            let writer = try PostgresStore(
                model: ExampleModel.model,
                configuration: try .init(url: url, schema: schema).with {
                    $0.poolSize = 1; $0.notificationChannel = channel
                })
            let other = try PostgresStore(
                model: ExampleModel.model,
                configuration: try .init(url: url, schema: schema).with {
                    $0.poolSize = 1; $0.notificationChannel = channel
                })
            defer {
                writer.close()
                other.close()
            }
            let listener = try writer.makeChangeListener()
            defer { listener.close() }
            try body(writer, other, listener)
        }
    }

    /// Waits for the changes of one notification (bounded; returns at once when it is there).
    private func changes(_ listener: ChangeListener) throws -> [StoreChange] {
        for _ in 0..<50 {
            let changes = try listener.next(timeout: .milliseconds(200))
            if !changes.isEmpty { return changes }
        }
        return []
    }

    /// A batch update announces the rows it wrote as updated, though it returns only their count.
    @Test func aBatchUpdateAnnouncesTheRowsItWrote() throws {
        try withStores { writer, other, listener in
            var cars = (0..<3).map { i in Car.sample("car \(i)") }
            try cars.saveAll(ManagedObjectContext(store: writer))
            _ = try changes(listener)
            let result = try ManagedObjectContext(store: other).batchUpdate(
                BatchUpdateRequest(
                    entityName: "Car", predicate: .key("name") != "car 0", values: ["nickname": .string("batch")]))
            #expect(result == BatchResult(count: 2))
            let updated = try changes(listener)
            #expect(updated.map(\.entityName) == ["Car"])
            #expect(Set(updated.first?.updated ?? []) == Set(cars[1...].compactMap(\.objectID)))
        }
    }

    /// A batch delete announces the rows it deleted.
    @Test func aBatchDeleteAnnouncesTheRowsItDeleted() throws {
        try withStores { writer, other, listener in
            var cars = (0..<3).map { i in Car.sample("car \(i)") }
            try cars.saveAll(ManagedObjectContext(store: writer))
            _ = try changes(listener)
            let result = try ManagedObjectContext(store: other).batchDelete(
                BatchDeleteRequest(entityName: "Car", predicate: .key("name") != "car 0"))
            #expect(result == BatchResult(count: 2))
            let deleted = try changes(listener)
            #expect(deleted.map(\.entityName) == ["Car"])
            #expect(Set(deleted.first?.deleted ?? []) == Set(cars[1...].compactMap(\.objectID)))
        }
    }

    @Test func aCommittedSaveAnnouncesTheRowsItInsertedUpdatedAndDeleted() throws {
        try withStores { writer, other, listener in
            var cars = (0..<3).map { i in Car.sample("car \(i)") }
            try cars.saveAll(ManagedObjectContext(store: writer))
            let inserted = try changes(listener)
            #expect(inserted.map(\.entityName) == ["Car"])
            #expect(Set(inserted.first?.inserted ?? []) == Set(cars.compactMap(\.objectID)))
            #expect(inserted.first?.isComplete == true)

            // A save through another store (another process) is heard too.
            let context = ManagedObjectContext(store: other)
            cars[0].nickname = "renamed"
            try cars[0].save(context)
            var deleted = cars[1]
            try deleted.delete(context)
            var heard: [StoreChange] = []
            while heard.flatMap(\.deleted).isEmpty {
                let next = try changes(listener)
                if next.isEmpty { break }
                heard += next
            }
            #expect(heard.flatMap(\.updated) == [cars[0].objectID].compactMap { $0 })
            #expect(heard.flatMap(\.deleted) == [cars[1].objectID].compactMap { $0 })
            #expect(heard.allSatisfy { $0.entityName == "Car" })
        }
    }

    @Test func aRolledBackSaveAnnouncesNothing() throws {
        try withStores { writer, _, listener in
            var car = Car.sample("stale")
            try car.save(ManagedObjectContext(store: writer))
            _ = try changes(listener)
            // Read the row, let another writer move its version on (plain SQL: no notification), then save
            // the stale object: a conflict, rolled back.
            let staleContext = ManagedObjectContext(store: writer)
            let staleObject = try staleContext.existingObject(with: #require(car.objectID))
            let table = SQLIdentifier("Car", schema: writer.schema).quoted
            try TestDatabase.execute(
                try #require(TestDatabase.url), "UPDATE \(table) SET \"_version\" = \"_version\" + 1")
            try staleObject.setValue("older", forKey: "nickname")
            #expect(throws: CVManagedStructError.self) { try staleContext.save() }
            #expect(try listener.next(timeout: .milliseconds(300)).isEmpty)
        }
    }

    @Test func aSaveTooLargeToListIsAnnouncedByEntity() throws {
        try withStores { writer, _, listener in
            let products = (1...3000).map { Product(id: Int32($0), name: "p\($0)", price: 1) }
            try products.saveAll(ManagedObjectContext(store: writer))
            let heard = try changes(listener)
            #expect(heard.map(\.entityName) == ["Product"])
            #expect(heard.first?.isComplete == false)
            #expect(heard.first?.updated.isEmpty == true)
        }
    }

    @Test func aStoreWithoutAChannelHasNoListenerAndBadChannelsAreRefused() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            #expect(throws: PostgresStoreError.self) { try store.makeChangeListener() }
            for channel in ["", String(repeating: "c", count: 64)] {
                #expect(throws: PostgresStoreError.self) {
                    _ = try PostgresStore(
                        model: ExampleModel.model,
                        configuration: try .init(url: url, schema: schema).with { $0.notificationChannel = channel })
                }
            }
        }
    }

    @Test func aStoreWithAChannelSendsExactlyOneMoreStatementPerSave() throws {
        try withStores { writer, _, _ in
            try TestDatabase.withExampleStore { plain, _, _ in
                let before = (writer.statistics, plain.statistics)
                var first = [Car.sample("a"), Car.sample("b")]
                var second = first
                try first.saveAll(ManagedObjectContext(store: writer))
                try second.saveAll(ManagedObjectContext(store: plain))
                let withChannel = writer.statistics.since(before.0).statements
                let without = plain.statistics.since(before.1).statements
                #expect(withChannel == without + 1)
            }
        }
    }
}

extension Car {
    /// A car with every attribute set.
    static func sample(_ name: String) -> Car {
        Car(
            name: name, kind: .sedan, doors: 4, mileage: 1, seats: 5, weight: 1000, power: 90, registered: true,
            price: 10_000, builtAt: Date(timeIntervalSince1970: 1_000_000), vin: UUID(), photo: nil, nickname: nil)
    }
}
