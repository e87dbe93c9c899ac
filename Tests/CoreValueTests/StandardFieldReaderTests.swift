@testable import CoreValue
import Foundation
import Testing

/// Every attribute type has a standard Swift type whose struct fields box through a specialized reader
/// (`StandardFieldReaders`), plain and optional. A type missing there would still box, through its key path,
/// only slower: this is the test that notices (CONTRIBUTING.md, "Adding a column type").
@Suite struct StandardFieldReaderTests {
    static func swiftType(of type: AttributeType) -> (plain: Any.Type, optional: Any.Type) {
        switch type {
        case .int16: (Int16.self, Int16?.self)
        case .int32: (Int32.self, Int32?.self)
        case .int64: (Int64.self, Int64?.self)
        case .double: (Double.self, Double?.self)
        case .float: (Float.self, Float?.self)
        case .bool: (Bool.self, Bool?.self)
        case .string: (String.self, String?.self)
        case .data: (Data.self, Data?.self)
        case .date: (Date.self, Date?.self)
        case .decimal: (Decimal.self, Decimal?.self)
        case .uuid: (UUID.self, UUID?.self)
        case .uri: (URL.self, URL?.self)
        }
    }

    @Test(arguments: AttributeType.allCases) func everyTypeHasASpecializedReader(_ type: AttributeType) {
        let swift = Self.swiftType(of: type)
        #expect(StandardFieldReaders.reader(for: swift.plain, at: 0)?.type == type)
        #expect(StandardFieldReaders.reader(for: swift.optional, at: 0)?.type == type)
    }
}
