import CoreValue
import CoreValueXcodeModel
import Foundation
import Testing

/// Core Data models as Xcode writes them (issue 31, point 1): every attribute type, optionality, defaults,
/// single-attribute uniqueness, relationships with their kinds, rules and inverses; warnings for what has no
/// meaning here; the bundle's current version or a named one; clear errors for what cannot be read.
@Suite struct XcodeModelTests {
    static let current = #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Company" representedClassName="Company" syncable="YES" codeGenerationType="class">
                <attribute name="name" attributeType="String"/>
                <relationship name="employees" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Employee" inverseName="company" inverseEntity="Employee"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="name"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Employee" representedClassName="Employee" syncable="YES" codeGenerationType="class">
                <attribute name="active" attributeType="Boolean" defaultValueString="YES" usesScalarValueType="YES"/>
                <attribute name="age" optional="YES" attributeType="Integer 16" defaultValueString="18" usesScalarValueType="YES"/>
                <attribute name="badge" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="salary" attributeType="Decimal" defaultValueString="1000.50"/>
                <attribute name="rating" optional="YES" attributeType="Double" defaultValueString="2.5" usesScalarValueType="YES"/>
                <attribute name="ratio" optional="YES" attributeType="Float" defaultValueString="0.25" usesScalarValueType="YES"/>
                <attribute name="serial" attributeType="Integer 64" defaultValueString="7" usesScalarValueType="YES"/>
                <attribute name="startedAt" attributeType="Date" defaultDateTimeInterval="0" usesScalarValueType="NO"/>
                <attribute name="name" attributeType="String" defaultValueString="new"/>
                <attribute name="photo" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="homepage" optional="YES" attributeType="URI"/>
                <attribute name="skills" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromDataTransformer" customClassName="[String]"/>
                <attribute name="draft" optional="YES" transient="YES" attributeType="String"/>
                <attribute name="blob" optional="YES" attributeType="Undefined"/>
                <relationship name="company" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Company" inverseName="employees" inverseEntity="Company"/>
                <relationship name="mentor" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Employee"/>
                <relationship name="reviews" optional="YES" toMany="YES" minCount="1" deletionRule="Deny" destinationEntity="Review"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="id"/></uniquenessConstraint>
                    <uniquenessConstraint><constraint value="name"/><constraint value="badge"/></uniquenessConstraint>
                </uniquenessConstraints>
                <fetchIndex name="byName"><fetchIndexElement property="name" type="Binary" order="ascending"/></fetchIndex>
            </entity>
            <entity name="Review" syncable="YES">
                <attribute name="text" attributeType="String"/>
            </entity>
            <fetchRequest name="Seniors" entity="Employee" predicateString="age &gt; 60"/>
            <configuration name="Cloud"><memberEntity name="Employee"/></configuration>
            <elements><element name="Employee" positionX="0" positionY="0" width="128" height="300"/></elements>
        </model>
        """#

    static let older = #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Employee" syncable="YES"><attribute name="name" attributeType="String"/></entity>
        </model>
        """#

    /// A `.xcdatamodeld` bundle in a temporary directory: versions `Model` and `Model 2`, the second current.
    static func bundle() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("xcdatamodel-\(UUID().uuidString)")
        let bundle = root.appendingPathComponent("App.xcdatamodeld")
        for (version, contents) in [("Model", older), ("Model 2", current)] {
            let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try contents.write(to: folder.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        let plist = #"""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Model 2.xcdatamodel</string></dict></plist>
            """#
        try plist.write(to: bundle.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
        return bundle
    }

    @Test func aModelReadAloneHandsEveryWarningToItsCaller() throws {
        let bundle = try Self.bundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try XcodeModel(contentsOf: bundle)
        #expect(!imported.warnings.isEmpty)
        var warnings: [XcodeModelWarning] = []
        let model = try ManagedObjectModel(contentsOf: bundle) { warnings.append($0) }
        #expect(model == imported.model)
        #expect(warnings == imported.warnings)
        #expect(try ManagedObjectModel(contentsOf: bundle, version: "Model", warnings: { _ in }).entities.count > 0)
    }

    @Test func theCurrentVersionMapsEveryTypeAndRule() throws {
        let bundle = try Self.bundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try XcodeModel(contentsOf: bundle)
        #expect(imported.version == "Model 2")
        let employee = try imported.model.entity("Employee")
        let types = Dictionary(uniqueKeysWithValues: employee.attributes.map { ($0.name, $0.type) })
        #expect(
            types == [
                "active": .bool, "age": .int16, "badge": .int32, "id": .uuid, "salary": .decimal, "rating": .double,
                "ratio": .float, "serial": .int64, "startedAt": .date, "name": .string, "photo": .data,
                "homepage": .uri, "skills": .data,
            ])
        let attribute = { (name: String) in employee.attributes.first { $0.name == name } }
        #expect(attribute("age")?.isOptional == true && attribute("name")?.isOptional == false)
        #expect(attribute("id")?.isUnique == true && attribute("name")?.isUnique == false)
        #expect(attribute("active")?.defaultValue == .bool(true))
        #expect(attribute("age")?.defaultValue == .int16(18))
        #expect(attribute("salary")?.defaultValue == .decimal(Decimal(string: "1000.50") ?? 0))
        #expect(attribute("ratio")?.defaultValue == .float(0.25))
        #expect(attribute("startedAt")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(attribute("name")?.defaultValue == .string("new"))
        let relationships = Dictionary(uniqueKeysWithValues: employee.relationships.map { ($0.name, $0) })
        #expect(relationships["company"]?.kind == .toOne && relationships["company"]?.inverse == "employees")
        #expect(relationships["reviews"]?.kind == .unorderedToMany && relationships["reviews"]?.deleteRule == .deny)
        #expect(relationships["mentor"]?.deleteRule == .noAction)
        let company = try imported.model.entity("Company")
        #expect(company.relationships.first?.kind == .orderedToMany)
        #expect(company.relationships.first?.deleteRule == .cascade)
        #expect(company.attributes.first?.isUnique == true)

        // Nothing left out silently: one warning per item, naming it.
        let warned = Set(imported.warnings.map { [$0.entity, $0.property].compactMap { $0 }.joined(separator: ".") })
        for item in [
            "Employee.draft", "Employee.blob", "Employee.skills", "Employee.photo", "Employee.reviews",
            "Employee.name+badge", "Employee.byName", "Seniors", "Cloud",
        ] {
            #expect(warned.contains(item), "no warning for \(item): \(imported.warnings)")
        }
        #expect(imported.warnings.contains { $0.message.contains("layout") })
        #expect(
            imported.warnings.first { $0.property == "skills" }?.message.contains(
                "NSSecureUnarchiveFromDataTransformer") == true)
    }

    @Test func aNamedVersionAFolderAndAContentsFileAreReadToo() throws {
        let bundle = try Self.bundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let older = try XcodeModel(contentsOf: bundle, version: "Model")
        #expect(older.version == "Model")
        #expect(try older.model.entity("Employee").attributes.map(\.name) == ["name"])
        #expect(older.warnings.isEmpty)
        let folder = bundle.appendingPathComponent("Model 2.xcdatamodel")
        #expect(try XcodeModel(contentsOf: folder).model.entities.count == 3)
        #expect(try XcodeModel(contentsOf: folder.appendingPathComponent("contents")).model.entities.count == 3)
        #expect(throws: XcodeModelError.self) { try XcodeModel(contentsOf: bundle, version: "Model 9") }
    }

    /// The imported model is a model like any other: objects of it save and fetch.
    @Test func theImportedModelSavesAndFetches() throws {
        let bundle = try Self.bundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let context = ManagedObjectContext(store: MemoryStore(model: try XcodeModel(contentsOf: bundle).model))
        let company = try context.insert(entityName: "Company")
        try company.setValue(.string("Acme"), forKey: "name")
        let employee = try context.insert(entityName: "Employee")
        try employee.setValue(.uuid(UUID()), forKey: "id")
        try employee.setObject(company, forKey: "company")
        try context.save()
        let reader = ManagedObjectContext(store: context.store)
        let fetched = try reader.fetch(FetchRequest(entityName: "Employee"))
        #expect(fetched.count == 1)
        #expect(try fetched.first?.value(forKey: "name") == .string("new"))
        #expect(try fetched.first?.object(forKey: "company")?.value(forKey: "name") == .string("Acme"))
    }

    /// "Preserve After Deletion" becomes the attribute's flag: a delete's history entry keeps its value.
    @Test func preserveAfterDeletionIsKept() throws {
        let contents = FileManager.default.temporaryDirectory.appendingPathComponent("contents-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: contents) }
        try #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Item" syncable="YES">
                <attribute name="sku" attributeType="String" preserveAfterDeletion="YES"/>
                <attribute name="note" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """#.write(to: contents, atomically: true, encoding: .utf8)
        let attributes = try XcodeModel(contentsOf: contents).model.entities.first?.attributes ?? []
        #expect(attributes.map(\.preservesValueAfterDeletion) == [true, false])
    }

    @Test func whatCannotBeReadIsAClearError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "xcdatamodel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func read(_ text: String) throws -> XcodeModel {
            let file = directory.appendingPathComponent("contents")
            try text.write(to: file, atomically: true, encoding: .utf8)
            return try XcodeModel(contentsOf: file)
        }
        // A parent the model does not have is the model's error, naming the entity.
        let orphan = #expect(throws: CVManagedStructError.self) {
            try read(#"<model><entity name="Photo" parentEntity="Media"/></model>"#)
        }
        #expect(orphan?.entity == "Photo")
        let malformed = #expect(throws: XcodeModelError.self) { try read("<model><entity name=\"A\">\n</model>") }
        #expect(malformed?.message.contains("line") == true)
        #expect(throws: XcodeModelError.self) { try read(#"<plist version="1.0"/>"#) }
        #expect(throws: XcodeModelError.self) { try read(#"<model><entity><attribute name="a"/></entity></model>"#) }
        #expect(throws: XcodeModelError.self) {
            try XcodeModel(contentsOf: directory.appendingPathComponent("missing.xcdatamodeld"))
        }
        // Entities that do not make a model (an inverse naming nothing) are the model's own error.
        #expect(throws: CVManagedStructError.self) {
            try read(
                #"<model><entity name="A"><relationship name="b" destinationEntity="B" inverseName="nope"/></entity><entity name="B"/></model>"#
            )
        }
    }
}
