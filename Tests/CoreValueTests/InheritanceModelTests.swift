@_spi(StoreImplementation) import CoreValue
import Testing

/// Entity inheritance in the model (issue 31, point 2): inherited properties resolved parents first, the
/// questions stores ask of a hierarchy, and typed errors naming the entity and key for what cannot be.
@Suite struct InheritanceModelTests {
    @Test func aSubentityHasItsParentChainsPropertiesBeforeItsOwn() throws {
        let model = InheritanceSuite.model
        let raw = try model.entity("RawPhoto")
        #expect(raw.attributes.map(\.name) == ["code", "title", "width", "sensor"])
        #expect(raw.relationships.map(\.name) == ["album"])
        #expect(raw.declaredAttributes.map(\.name) == ["sensor"])
        #expect(raw.inheritedAttributeCount == 3)
        #expect(raw.attribute(named: "code")?.isUnique == true)
        #expect(try model.entity("Media").isAbstract)
        #expect(model.rootEntity(of: "RawPhoto") == "Media")
        #expect(model.rootEntity(of: "Album") == "Album")
        #expect(model.concreteEntities(of: "Media") == ["Photo", "RawPhoto", "Video"])
        #expect(model.concreteEntities(of: "Photo") == ["Photo", "RawPhoto"])
        #expect(model.isEntity("RawPhoto", kindOf: "Media"))
        #expect(!model.isEntity("Video", kindOf: "Photo"))
        #expect(model.isInHierarchy("Video"))
        #expect(!model.isInHierarchy("Album"))
    }

    @Test func resolvingAResolvedModelAgainGivesTheSameModel() throws {
        let model = InheritanceSuite.model
        #expect(try ManagedObjectModel(model.entities) == model)
        // Declaration order does not matter: a subentity may come before its parent.
        let reversed = try ManagedObjectModel(
            InheritanceSuite.model.entities.reversed().map { entity in
                Entity(
                    entity.name, parent: entity.parent, abstract: entity.isAbstract,
                    attributes: Array(entity.declaredAttributes), relationships: Array(entity.declaredRelationships))
            })
        #expect(try reversed.entity("RawPhoto").attributes.map(\.name) == ["code", "title", "width", "sensor"])
    }

    @Test(arguments: [
        (
            [Entity("A", parent: "Nope")],
            CVManagedStructError.invalidModel(entity: "A", key: nil, message: "unknown parent entity 'Nope'")
        ),
        (
            [Entity("A", parent: "B"), Entity("B", parent: "C"), Entity("C", parent: "A")],
            CVManagedStructError.invalidModel(entity: "A", key: nil, message: "inherits from itself: A -> B -> C -> A")
        ),
        (
            [Entity("A", parent: "A")],
            CVManagedStructError.invalidModel(entity: "A", key: nil, message: "inherits from itself: A -> A")
        ),
        (
            [
                Entity("A", attributes: [Attribute("x", .string)]),
                Entity("B", parent: "A", attributes: [Attribute("x", .string)]),
            ],
            CVManagedStructError.invalidModel(
                entity: "B", key: "x", message: "declares 'x' again; it is inherited from 'A'")
        ),
        (
            [
                Entity("A"), Entity("B", parent: "A", attributes: [Attribute("x", .string)]),
                Entity("C", parent: "A", attributes: [Attribute("x", .int64)]),
            ],
            CVManagedStructError.invalidModel(
                entity: "C", key: "x",
                message: "'B' of the same hierarchy declares 'x' too; declare it once, on a common parent")
        ),
    ])
    func anInvalidHierarchyIsATypedErrorNamingEntityAndKey(entities: [Entity], expected: CVManagedStructError) {
        #expect(throws: expected) { try ManagedObjectModel(entities) }
    }

    @Test func aLongChainOfParentsResolvesWithoutRecursion() throws {
        let depth = 1_000
        var entities = [Entity("E0", attributes: [Attribute("a0", .int64)])]
        for level in 1..<depth {
            entities.append(Entity("E\(level)", parent: "E\(level - 1)", attributes: [Attribute("a\(level)", .int64)]))
        }
        let model = try ManagedObjectModel(entities.reversed())
        #expect(try model.entity("E\(depth - 1)").attributes.count == depth)
        #expect(model.concreteEntities(of: "E0").count == depth)
    }

    @Test func anInheritedRelationshipKeepsItsInverseToTheParent() throws {
        let model = InheritanceSuite.model
        let video = try model.entity("Video")
        let album = try #require(video.relationship(named: "album"))
        #expect(model.inverse(of: album)?.relationship.destination == "Media")
    }
}
