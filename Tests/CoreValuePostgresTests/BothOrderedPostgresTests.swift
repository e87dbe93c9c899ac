@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// The seed's many-to-many ordered on both sides, on PostgreSQL: the DDL has a join table per side, each
/// with its positions under a deferred unique constraint; the schema check at open passes; and a second
/// store reads back both orders after reorders on each side.
@Test func aManyToManyOrderedOnBothSidesKeepsEachOrderInPostgres() throws {
    let model = try BothOrderedSuite.makeModel()
    try TestDatabase.withSchema { url, schema in
        let ddl = SchemaPrinter(model: model, schema: schema).ddl
        #expect(ddl.contains(#""Article_categories""#))
        #expect(ddl.contains(#""Category_articles""#))
        #expect(ddl.components(separatedBy: "DEFERRABLE INITIALLY DEFERRED").count - 1 >= 2)
        try TestDatabase.execute(url, "CREATE SCHEMA \(SQLIdentifier.quote(schema))")
        try TestDatabase.execute(url, ddl)
        let store = try PostgresStore(
            model: model, configuration: try .init(url: url, schema: schema).with { $0.poolSize = 2 })
        defer { store.close() }
        let second = try PostgresStore(
            model: model, configuration: try .init(url: url, schema: schema).with { $0.poolSize = 1 })
        defer { second.close() }
        try BothOrderedSuite.run(store, readers: [store, second])
    }
}
