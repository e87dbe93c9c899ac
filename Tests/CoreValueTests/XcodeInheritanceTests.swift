@_spi(StoreImplementation) import CoreValue
import CoreValueXcodeModel
import Foundation
import Testing

/// Entity inheritance read from an Xcode model (issue 31, point 2): `parentEntity` and `isAbstract` become the
/// model's parents and abstract entities, a three-level hierarchy under an abstract root with relationships to
/// that root imports equal to the same model declared in Swift (`InheritanceSuite.model`), and works on a store.
@Suite struct XcodeInheritanceTests {
    /// As Xcode writes it: a subentity lists only its own properties.
    static let contents = #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Media" representedClassName="Media" isAbstract="YES" syncable="YES" codeGenerationType="class">
                <attribute name="code" attributeType="String"/>
                <attribute name="title" attributeType="String"/>
                <relationship name="album" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Album" inverseName="items" inverseEntity="Album"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="code"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Photo" representedClassName="Photo" parentEntity="Media" syncable="YES" codeGenerationType="class">
                <attribute name="width" attributeType="Integer 64" usesScalarValueType="YES"/>
            </entity>
            <entity name="RawPhoto" representedClassName="RawPhoto" parentEntity="Photo" syncable="YES" codeGenerationType="class">
                <attribute name="sensor" attributeType="String"/>
            </entity>
            <entity name="Video" representedClassName="Video" parentEntity="Media" syncable="YES" codeGenerationType="class">
                <attribute name="seconds" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="width" attributeType="Integer 64" usesScalarValueType="YES"/>
            </entity>
            <entity name="Album" representedClassName="Album" syncable="YES" codeGenerationType="class">
                <attribute name="name" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Media" inverseName="album" inverseEntity="Media"/>
                <relationship name="cover" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Media"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="name"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
        </model>
        """#

    static func read(_ text: String) throws -> XcodeModel {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "xcdatamodel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("contents")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return try XcodeModel(contentsOf: file)
    }

    @Test func aHierarchyImportsEqualToTheSwiftDeclaration() throws {
        let imported = try Self.read(Self.contents)
        #expect(imported.model == InheritanceSuite.model)
        #expect(try imported.model.entity("Media").isAbstract)
        #expect(try imported.model.entity("RawPhoto").parent == "Photo")
        #expect(try imported.model.entity("RawPhoto").attributes.map(\.name) == ["code", "title", "width", "sensor"])
        #expect(imported.model.concreteEntities(of: "Media") == ["Photo", "RawPhoto", "Video"])
    }

    @Test func theImportedHierarchyWorksOnAStore() throws {
        let store = MemoryStore(model: try Self.read(Self.contents).model)
        let context = ManagedObjectContext(store: store)
        try InheritanceSuite.raw.save(context)
        try InheritanceSuite.video.save(context)
        let items: [InheritanceSuite.AnyMedia] = try InheritanceSuite.AnyMedia.query(
            ManagedObjectContext(store: store), predicate: nil)
        #expect(items == [.rawPhoto(InheritanceSuite.raw), .video(InheritanceSuite.video)])
        #expect { try context.insert(entityName: "Media") } throws: { hasCode($0, .abstractEntity) }
    }

    /// Siblings that each declare an attribute of one name (Photo's and Video's `width`, as real models do)
    /// import when the types agree; differing types, or a relationship two siblings declare, are typed errors.
    @Test func siblingsMayEachDeclareAnAttributeOfOneNameAndType() throws {
        let model = try Self.read(Self.contents).model
        #expect(try model.entity("Photo").declaredAttributes.map(\.name) == ["width"])
        #expect(try model.entity("Video").declaredAttributes.map(\.name) == ["seconds", "width"])
        #expect(model.declaringEntity(of: "width", in: "Video") == "Video")
        #expect(model.declaringEntity(of: "width", in: "RawPhoto") == "Photo")
        // Video's width (the line after its seconds) as a Double.
        var lines = Self.contents.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let seconds = try #require(lines.firstIndex { $0.contains(#"name="seconds""#) })
        lines[seconds + 1] = lines[seconds + 1].replacingOccurrences(of: "Integer 64", with: "Double")
        let retyped = lines.joined(separator: "\n")
        #expect(retyped != Self.contents)
        let error = #expect(throws: CVManagedStructError.self) { try Self.read(retyped) }
        #expect(error?.code == .invalidModel)
        #expect(error?.entity == "Video" && error?.key == "width")
        #expect(error?.expected == "int64" && error?.found == "double")
        #expect(error?.message?.contains("'Photo.width'") == true)
        let relationships = #"""
            <model>
                <entity name="A" isAbstract="YES"/>
                <entity name="B" parentEntity="A">
                    <relationship name="x" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="A"/>
                </entity>
                <entity name="C" parentEntity="A">
                    <relationship name="x" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="A"/>
                </entity>
            </model>
            """#
        let refused = #expect(throws: CVManagedStructError.self) { try Self.read(relationships) }
        #expect(refused?.code == .invalidModel && refused?.entity == "C" && refused?.key == "x")
    }

    @Test func anInheritanceErrorNamesTheEntity() throws {
        let cycle = #"<model><entity name="A" parentEntity="B"/><entity name="B" parentEntity="A"/></model>"#
        let error = #expect(throws: CVManagedStructError.self) { try Self.read(cycle) }
        #expect(error?.code == .invalidModel)
        #expect(error?.message?.contains("inherits from itself") == true)
    }
}
