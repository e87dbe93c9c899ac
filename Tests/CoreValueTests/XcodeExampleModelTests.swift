import CoreValue
import CoreValueExamples
import CoreValueXcodeModel
import Foundation
import Testing

/// The original CoreValue test model (the example model: Employee, Company, Shop, Product, Car, Author,
/// Article, Category, with an ordered many-to-many) written as Xcode writes it: imported, it is the same model
/// as the Swift declaration, so its DDL is too, and the structs save and read through it.
@Suite struct XcodeExampleModelTests {
    static let contents = #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23A344" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Employee" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="age" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="position" optional="YES" attributeType="String"/>
                <attribute name="department" attributeType="String"/>
                <attribute name="job" attributeType="String"/>
                <relationship name="company" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Company" inverseName="employees" inverseEntity="Company"/>
            </entity>
            <entity name="Company" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="employees" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Employee" inverseName="company" inverseEntity="Employee"/>
            </entity>
            <entity name="Shop" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Employee"/>
                <relationship name="products" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Product"/>
            </entity>
            <entity name="Product" syncable="YES">
                <attribute name="id" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="name" attributeType="String"/>
                <attribute name="price" attributeType="Decimal"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <entity name="Car" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="kind" attributeType="String"/>
                <attribute name="doors" attributeType="Integer 32" usesScalarValueType="YES"/>
                <attribute name="mileage" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="seats" attributeType="Integer 16" usesScalarValueType="YES"/>
                <attribute name="weight" attributeType="Float" usesScalarValueType="YES"/>
                <attribute name="power" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="registered" attributeType="Boolean" usesScalarValueType="YES"/>
                <attribute name="price" attributeType="Decimal"/>
                <attribute name="builtAt" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="vin" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="photo" optional="YES" attributeType="Binary"/>
                <attribute name="nickname" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Author" syncable="YES">
                <attribute name="id" attributeType="String"/>
                <attribute name="name" attributeType="String"/>
                <relationship name="articles" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Article" inverseName="author" inverseEntity="Article"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <entity name="Article" syncable="YES">
                <attribute name="id" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="title" attributeType="String"/>
                <attribute name="text" attributeType="String"/>
                <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Author" inverseName="articles" inverseEntity="Author"/>
                <relationship name="categories" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Category" inverseName="articles" inverseEntity="Category"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <entity name="Category" syncable="YES">
                <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                <attribute name="name" attributeType="String"/>
                <relationship name="articles" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Article" inverseName="categories" inverseEntity="Article"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="id"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
        </model>
        """#

    static func imported() throws -> XcodeModel {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("example-\(UUID().uuidString).xml")
        try contents.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try XcodeModel(contentsOf: file)
    }

    @Test func theImportedExampleModelIsTheSwiftDeclaration() throws {
        let imported = try Self.imported()
        #expect(imported.model.entities == ExampleModel.entities)
        #expect(imported.model == ExampleModel.model)
        // Required to-ones are checked nowhere: the file's to-ones are optional, so nothing is said.
        #expect(imported.warnings.isEmpty, "\(imported.warnings)")
    }

    @Test func theExampleStructsSaveAndReadThroughTheImportedModel() throws {
        let store = MemoryStore(model: try Self.imported().model)
        var company = Company(
            name: "Acme",
            employees: [
                Employee(name: "Ann", age: 30, position: nil, department: "D", job: "J"),
                Employee(name: "Bob", age: 40, position: "Lead", department: "D", job: "J"),
            ])
        try company.save(ManagedObjectContext(store: store))
        let found: [Company] = try Company.query(ManagedObjectContext(store: store), predicate: .key("name") == "Acme")
        #expect(found.first?.employees.map(\.name) == ["Ann", "Bob"])
    }
}
