@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `toObject(nil)`: ephemeral objects whose entity comes from the struct itself, never from a process-wide
/// registry of models.
@Suite struct EphemeralObjectTests {
    @Test func anEphemeralGraphReadsBackWithoutAnyContext() throws {
        let car = Fixtures.car()
        let object = try car.toObject(nil)
        #expect(object.managedObjectContext == nil)
        #expect(try Car.fromObject(object) == car)
        var company = Company(name: "Acme", employees: [Fixtures.employee("Ann"), Fixtures.employee("Bob")])
        let boxed = try company.mutatingToObject(nil)
        #expect(company.objectID == nil)
        let read = try Company.fromObject(boxed)
        #expect(read.employees.map(\.name) == ["Ann", "Bob"])
        #expect(read.objectID == nil)
        let shop = Shop(name: "S", owner: Fixtures.employee("Cy"), products: [Product(id: 1, name: "Tea", price: 2)])
        #expect(try Shop.fromObject(try shop.toObject(nil)) == shop)
    }

    @Test func anotherModelDeclaringTheSameEntityNameDoesNotChangeEphemeralObjects() throws {
        // A context over a model whose "Employee" is something else entirely; before, the last model a
        // context registered decided what toObject(nil) could box.
        let other = try ManagedObjectModel {
            Entity("Employee") { Attribute("badge", .int64) }
        }
        let context = ManagedObjectContext(store: MemoryStore(model: other))
        let employee = Fixtures.employee("Ann")
        #expect(try Employee.fromObject(try employee.toObject(nil)) == employee)
        // The context's own model still applies to boxing into it.
        #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "name")) {
            try employee.toObject(context)
        }
    }

    @Test func anEphemeralObjectNeverReachesAStore() throws {
        let object = try Fixtures.employee("Ann").toObject(nil)
        let store = MemoryStore(model: ExampleModel.model)
        let context = ManagedObjectContext(store: store)
        let company = try context.insert(entityName: "Company")
        #expect(throws: CVManagedStructError.self) { try company.setObjects([object], forKey: "employees") }
        #expect(store.count(of: "Employee") == 0)
    }

    @Test func aFreshProcessCanBoxWithoutAContextFirst() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binDirectory()).appendingPathComponent(
            "corevalue-worker")
        process.arguments = ["ephemeral"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(String(decoding: data, as: UTF8.self) == "ephemeral Acme Ann,Bob nil\n")
        #expect(process.terminationStatus == 0)
    }

    /// The build's products directory: where this test bundle lives.
    static func binDirectory() throws -> String {
        var url = Bundle.main.bundleURL
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("corevalue-worker").path) {
                return url.path
            }
            url.deleteLastPathComponent()
        }
        throw CVManagedStructError.structValueError(message: "corevalue-worker not found near \(Bundle.main.bundleURL)")
    }
}
