@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

/// `CVManagedStructError` is a struct with a code; the original CoreValue's cases read the same.
@Suite struct ErrorTests {
    @Test func localizedDescriptionIsTheDescription() {
        let error: any Error = CVManagedStructError.conflict(entity: "Account", message: "changed by another writer")
        #expect(error.localizedDescription == String(describing: error))
        #expect(error.localizedDescription.contains("Account"))
        #expect(error.localizedDescription.contains("changed by another writer"))
    }

    @Test func kindsMatchInCatchAndSwitchAndCarryTheirFields() {
        let error: any Error = CVManagedStructError.typeMismatch(
            entity: "Car", key: "doors", expected: "int32", found: "string")
        do {
            throw error
        } catch CVManagedStructError.conflict {
            Issue.record("a type mismatch matched .conflict")
        } catch CVManagedStructError.typeMismatch {
            // The seed's style of catch.
        } catch {
            Issue.record("no kind matched: \(error)")
        }
        guard let typed = error as? CVManagedStructError else {
            Issue.record("not a CVManagedStructError")
            return
        }
        switch typed.code {
        case .typeMismatch: break
        default: Issue.record("code \(typed.code)")
        }
        #expect(typed.entity == "Car" && typed.key == "doors" && typed.expected == "int32" && typed.found == "string")
        #expect("\(typed)" == "type mismatch for 'Car.doors': expected int32, found string")
        #expect(
            typed
                == CVManagedStructError(.typeMismatch, entity: "Car", key: "doors", expected: "int32", found: "string"))
        #expect(typed != CVManagedStructError.missingValue(entity: "Car", key: "doors"))
    }

    @Test func theSeedsFourCasesKeepTheirNamesAndMessages() {
        #expect("\(CVManagedStructError.structConversionError(message: "m"))" == "struct conversion error: m")
        #expect("\(CVManagedStructError.structValueError(message: "m"))" == "struct value error: m")
        #expect("\(CVManagedStructError.structUpdateError(message: "m"))" == "struct update error: m")
        #expect("\(CVManagedStructError.structDeleteError(message: "m"))" == "struct delete error: m")
        #expect("\(CVManagedStructError.unknownEntity("X"))" == "unknown entity 'X'")
        #expect(CVManagedStructError.objectNotFound(.permanent("Car", 7)).objectID == .permanent("Car", 7))
        #expect(CVManagedStructError.nestingTooDeep(entity: "E", what: "a predicate", limit: 100).limit == 100)
    }

    @Test func storesThrowTheKindTheContractNames() throws {
        let context = ManagedObjectContext(store: MemoryStore(model: ExampleModel.model))
        #expect {
            try context.fetch(FetchRequest(entityName: "Nope"))
        } throws: { error in
            CVManagedStructError.unknownEntity ~= error && (error as? CVManagedStructError)?.entity == "Nope"
        }
    }
}
