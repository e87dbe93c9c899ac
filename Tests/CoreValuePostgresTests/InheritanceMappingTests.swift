@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Testing

/// Entity inheritance on PostgreSQL: until its mapping (one table per hierarchy) exists, a model with
/// inheritance is refused by name before any SQL, not mapped table per entity (which would lose shared keys,
/// links to a parent and uniqueness across the hierarchy).
@Test func aModelWithInheritanceIsRefusedByTheMapping() throws {
    #expect {
        try SchemaMapping(model: InheritanceSuite.model).validate()
    } throws: { error in
        "\(error)".contains("Photo") && "\(error)".contains("inheritance")
    }
}
