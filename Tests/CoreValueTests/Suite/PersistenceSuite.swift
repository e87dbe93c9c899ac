import CoreValue
import CoreValueExamples
import Foundation
import Testing

enum PersistenceSuite {
    static let cases: [SuiteCase] = []
}
