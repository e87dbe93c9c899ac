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
                Entity("A"), Entity("B", parent: "A", relationships: [Relationship("x", to: "A")]),
                Entity("C", parent: "A", relationships: [Relationship("x", to: "A")]),
            ],
            CVManagedStructError.invalidModel(
                entity: "C", key: "x",
                message: "'B' of the same hierarchy declares 'x' too; declare it once, on a common parent")
        ),
        (
            [
                Entity("A"), Entity("B", parent: "A", attributes: [Attribute("x", .string)]),
                Entity("C", parent: "A", relationships: [Relationship("x", to: "A")]),
            ],
            CVManagedStructError.invalidModel(
                entity: "C", key: "x",
                message: "'B' of the same hierarchy declares 'x' too; declare it once, on a common parent")
        ),
    ])
    func anInvalidHierarchyIsATypedErrorNamingEntityAndKey(entities: [Entity], expected: CVManagedStructError) {
        #expect(throws: expected) { try ManagedObjectModel(entities) }
    }

    /// Siblings or cousins may each declare an attribute of one name and type (Core Data allows it): each has
    /// its own, with its own optionality and default, and each is its own declaring entity.
    @Test func siblingsAndCousinsMayEachDeclareAnAttributeOfOneNameAndType() throws {
        let model = try ManagedObjectModel([
            Entity("Media", abstract: true, attributes: [Attribute("code", .string)]),
            Entity("Photo", parent: "Media", attributes: [Attribute("width", .int64)]),
            Entity("RawPhoto", parent: "Photo", attributes: [Attribute("depth", .int16, optional: true)]),
            Entity("Video", parent: "Media", attributes: [Attribute("width", .int64, optional: true)]),
            Entity("Clip", parent: "Video", attributes: [Attribute("depth", .int16, defaultValue: .int16(8))]),
        ])
        #expect(try model.entity("Photo").attributes.map(\.name) == ["code", "width"])
        #expect(try model.entity("Video").attributes.map(\.name) == ["code", "width"])
        #expect(try model.entity("Photo").attribute(named: "width")?.isOptional == false)
        #expect(try model.entity("Video").attribute(named: "width")?.isOptional == true)
        #expect(try model.entity("Clip").attribute(named: "depth")?.defaultValue == .int16(8))
        #expect(model.declaringEntity(of: "width", in: "Photo") == "Photo")
        #expect(model.declaringEntity(of: "width", in: "Video") == "Video")
        #expect(model.declaringEntity(of: "width", in: "Clip") == "Video")
        #expect(model.declaringEntity(of: "depth", in: "RawPhoto") == "RawPhoto")
        #expect(model.declaringEntity(of: "depth", in: "Clip") == "Clip")
        #expect(model.entity(named: "Media")?.attribute(named: "width") == nil)
    }

    /// Siblings' attributes of one name and different types: the typed error names both entities, the key,
    /// and both types (`expected` the first declarer's, `found` the second's).
    @Test func siblingsAttributesOfOneNameAndDifferentTypesAreATypedError() {
        let error = #expect(throws: CVManagedStructError.self) {
            try ManagedObjectModel([
                Entity("Media", abstract: true),
                Entity("Photo", parent: "Media", attributes: [Attribute("width", .int64)]),
                Entity("Video", parent: "Media", attributes: [Attribute("width", .double)]),
            ])
        }
        #expect(error?.code == .invalidModel)
        #expect(error?.entity == "Video" && error?.key == "width")
        #expect(error?.expected == "int64" && error?.found == "double")
        #expect(
            error?.message
                == "'Photo.width' is int64 and 'Video.width' is double; entities of one hierarchy share a column "
                + "per name, so attributes of the same name need the same type")
        // Cousins too.
        let cousins = #expect(throws: CVManagedStructError.self) {
            try ManagedObjectModel([
                Entity("Media", abstract: true),
                Entity("Photo", parent: "Media"),
                Entity("RawPhoto", parent: "Photo", attributes: [Attribute("depth", .int16)]),
                Entity("Video", parent: "Media"),
                Entity("Clip", parent: "Video", attributes: [Attribute("depth", .string)]),
            ])
        }
        #expect(
            cousins?.entity == "Clip" && cousins?.key == "depth"
                && cousins?.message?.contains("'RawPhoto.depth'") == true)
    }

    /// A unique attribute two siblings declare is refused: their one UNIQUE column would be unique across
    /// both entities, which neither declared.
    @Test(arguments: [(true, false), (false, true), (true, true)])
    func siblingsAttributesOfOneNameThatAreUniqueAreRefused(first: Bool, second: Bool) {
        let error = #expect(throws: CVManagedStructError.self) {
            try ManagedObjectModel([
                Entity("Media", abstract: true),
                Entity("Photo", parent: "Media", attributes: [Attribute("serial", .string, unique: first)]),
                Entity("Video", parent: "Media", attributes: [Attribute("serial", .string, unique: second)]),
            ])
        }
        #expect(error?.code == .invalidModel && error?.entity == "Video" && error?.key == "serial")
        #expect(error?.message?.contains("'Photo.serial' and 'Video.serial' share one column of 'Media'") == true)
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
