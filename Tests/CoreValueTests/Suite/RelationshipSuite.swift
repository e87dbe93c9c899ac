import CoreValue
import CoreValueExamples
import Foundation
import Testing

enum RelationshipSuite {
    static let cases: [SuiteCase] = []
}
