@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

@Test func exampleModelValidates() throws {
    let model = try ExampleModel.make()
    #expect(model.entities.map(\.name) == ExampleModel.entities.map(\.name))
    #expect(ExampleModel.model == model)
}

@Test(arguments: [
    (
        [Entity("A"), Entity("A")],
        CVManagedStructError.invalidModel(entity: "A", key: nil, message: "duplicate entity name")
    ),
    (
        [Entity("A", attributes: [Attribute("x", .string), Attribute("x", .int16)])],
        CVManagedStructError.invalidModel(entity: "A", key: "x", message: "duplicate key")
    ),
])
func modelValidationNamesEntityAndKey(entities: [Entity], expected: CVManagedStructError) {
    #expect(throws: expected) { try ManagedObjectModel(entities) }
}

@Test func unknownDestinationNamesEntityAndKey() {
    #expect {
        try ManagedObjectModel { Entity("A") { Relationship("b", to: "B") } }
    } throws: { error in
        guard let error = error as? CVManagedStructError, error.code == .invalidModel else { return false }
        return error.entity == "A" && error.key == "b" && error.message?.contains("B") == true
    }
}

@Test func inverseMismatchNamesEntityAndKey() {
    #expect {
        try ManagedObjectModel {
            Entity("A") { Relationship("bs", to: "B", .unorderedToMany, inverse: "a") }
            Entity("B") { Relationship("a", to: "A", inverse: "other") }
        }
    } throws: { error in
        guard let error = error as? CVManagedStructError, error.code == .invalidModel else { return false }
        return error.entity == "A" && error.key == "bs"
    }
}
