import CoreValue
import CoreValueExamples
import Foundation
import Testing

enum ContextSuite {
    static let cases: [SuiteCase] = []
}
