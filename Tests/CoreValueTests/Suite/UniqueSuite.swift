import CoreValue
import CoreValueExamples
import Foundation
import Testing

enum UniqueSuite {
    static let cases: [SuiteCase] = []
}
