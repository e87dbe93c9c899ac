@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

@Test func buildersMakeTypedPredicates() {
    let predicate: CVPredicate = .key("age") > 30 && .key("department") == "Sales" && .key("position") == nil
    #expect(
        predicate
            == .and([
                .comparison(key: "age", .greaterThan, .int64(30)),
                .comparison(key: "department", .equal, .string("Sales")),
                .isNull(key: "position"),
            ]))
    #expect(
        CVPredicate.key("name").contains("x", caseInsensitive: true)
            == .stringMatch(key: "name", .contains, "x", caseInsensitive: true))
    #expect(CVPredicate.key("id").in([1, 2]) == .isIn(key: "id", [.int64(1), .int64(2)]))
    #expect(!CVPredicate.true == .not(.true))
    let either: CVPredicate = (.key("a") == 1 || .key("b") == 2) || .key("c") == 3
    #expect(
        either
            == .or([
                .comparison(key: "a", .equal, .int64(1)), .comparison(key: "b", .equal, .int64(2)),
                .comparison(key: "c", .equal, .int64(3)),
            ]))
}

@Test func validationConvertsOperandsToTheAttributeType() throws {
    let employee = try ExampleModel.model.entity("Employee")
    let predicate: CVPredicate = .key("age") > 30 || CVPredicate.key("age").between(1, 2)
    #expect(
        try predicate.validated(for: employee)
            == .or([.comparison(key: "age", .greaterThan, .int16(30)), .between(key: "age", .int16(1), .int16(2))]))
    #expect(try (.key("name") == .null).validated(for: employee) == .isNull(key: "name"))
    #expect(throws: CVManagedStructError.self) { try (.key("age") > 70_000).validated(for: employee) }
    #expect(throws: CVManagedStructError.self) { try CVPredicate.key("age").contains("1").validated(for: employee) }
    #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "x")) {
        try CVPredicate.key("x").isNull.validated(for: employee)
    }
    #expect(try CVPredicate.key("company").isNull.validated(for: employee) == .isNull(key: "company"))
}

@Test(arguments: [
    ("Seller", "Se%er", true), ("Seller", "se%", false), ("Seller", "S_ller", true), ("Seller", "%", true),
    ("", "%", true), ("", "_", false), ("a%b", "a\\%b", true), ("axb", "a\\%b", false), ("abcabd", "%ab_", true),
    ("abc", "a%c%", true), ("abc", "%d%", false), ("naïve", "na_ve", true),
])
func likeMatchesLikePostgres(value: String, pattern: String, expected: Bool) {
    #expect(StringMatchProbe.like(value, pattern) == expected)
}

/// Evaluates a LIKE through the public path: a one-row MemoryStore.
enum StringMatchProbe {
    static func like(_ value: String, _ pattern: String) -> Bool {
        let store = MemoryStore(model: ExampleModel.model)
        let insert = ObjectChange(id: .temporary("Author"), attributes: ["id": .string("a"), "name": .string(value)])
        guard (try? store.apply(ChangeSet(inserts: [insert]))) != nil else { return false }
        let request = FetchRequest(entityName: "Author", predicate: CVPredicate.key("name").like(pattern))
        return ((try? store.fetch(request)) ?? []).count == 1
    }
}

/// A request validated for a model is not validated again for the same model (a context validates, then its
/// store does), but any change to it, or another model, validates it afresh; whether it was validated is not
/// part of its value.
@Test func aValidatedRequestIsValidatedAgainOnlyWhenItOrTheModelChanged() throws {
    let model = ExampleModel.model
    let request = FetchRequest(entityName: "Employee", predicate: .key("age") > 30)
    let validated = try request.validated(in: model)
    #expect(validated.predicate == .comparison(key: "age", .greaterThan, .int16(30)))
    #expect(validated == FetchRequest(entityName: "Employee", predicate: .key("age") > Int16(30)))
    #expect(try validated.validated(in: model) == validated)
    var changed = validated
    changed.predicate = .key("x") == 1
    #expect(throws: CVManagedStructError.unknownKey(entity: "Employee", key: "x")) { try changed.validated(in: model) }
    changed = validated
    changed.fetchLimit = -1
    #expect(throws: CVManagedStructError.self) { try changed.validated(in: model) }
    // An equal model built again is another model: the request is checked against it.
    let other = try ManagedObjectModel(model.entities.filter { $0.name != "Employee" && $0.relationships.isEmpty })
    #expect(throws: CVManagedStructError.unknownEntity("Employee")) { try validated.validated(in: other) }
}
