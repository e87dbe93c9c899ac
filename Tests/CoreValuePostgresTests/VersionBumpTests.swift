@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Testing

/// An update with no columns (a save that changed only an object's relationships) still checks and bumps the
/// version, so concurrent relationship changes conflict instead of overwriting each other.
@Suite struct VersionBumpTests {
    @Test func anUpdateWithoutColumnsChecksAndBumpsTheVersion() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let temporary = ManagedObjectID.temporary("Company")
            let inserted = try store.apply(
                ChangeSet(inserts: [ObjectChange(id: temporary, attributes: ["name": .string("Acme")])]))
            let id = try #require(inserted.permanentIDs[temporary])
            let version = try #require(inserted.versions[id])

            let bumped = try store.apply(ChangeSet(updates: [ObjectChange(id: id, version: version, attributes: [:])]))
            #expect(bumped.versions[id] == version + 1)
            #expect(try store.fetch(ids: [id]).first?.version == version + 1)

            #expect(throws: CVManagedStructError.self) {
                try store.apply(ChangeSet(updates: [ObjectChange(id: id, version: version, attributes: [:])]))
            }
            let statements = store.statistics.statements
            _ = try store.apply(ChangeSet(updates: [ObjectChange(id: id, version: version + 1, attributes: [:])]))
            #expect(store.statistics.statements == statements + 1)
        }
    }
}
