import CoreValue
import CoreValueExamples
import Foundation
import Testing

enum QuerySuite {
    static let cases: [SuiteCase] = []
}
