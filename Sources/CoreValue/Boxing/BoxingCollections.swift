import Foundation

/// Lets boxing look inside an `Optional` held as `Any`.
protocol _OptionalBoxing {
    var _wrappedValue: Any? { get }
    static var _wrappedType: Any.Type { get }
}

extension Optional: _OptionalBoxing {
    var _wrappedValue: Any? { map { $0 } }
    static var _wrappedType: Any.Type { Wrapped.self }
}

/// Lets boxing list the elements of an array or set held as `Any`, and see its element type.
protocol _BoxingCollection {
    var _boxingElements: [Any] { get }
    static var _boxingElementType: Any.Type { get }
    /// Whether the collection keeps an order (an array: an ordered to-many relationship).
    static var _isOrderedBoxingCollection: Bool { get }
}

/// An array or set of one struct type: its records are built with the type known, without putting each
/// element in an existential and casting it back (see ``RecordBuilder/record(typed:depth:)``).
protocol _BoxingStructCollection {
    /// The elements' records; `nil` when the elements are not of `destination` (the general path then
    /// reports it).
    func _boxingRecords(_ builder: RecordBuilder, destination: String, depth: Int) throws -> [BoxRecord.Target]?
}

extension Array: _BoxingStructCollection where Element: BoxingStruct {
    func _boxingRecords(_ builder: RecordBuilder, destination: String, depth: Int) throws -> [BoxRecord.Target]? {
        guard Element.EntityName == destination else { return nil }
        return try map { .record(try builder.record(typed: $0, depth: depth)) }
    }
}

extension Set: _BoxingStructCollection where Element: BoxingStruct {
    func _boxingRecords(_ builder: RecordBuilder, destination: String, depth: Int) throws -> [BoxRecord.Target]? {
        guard Element.EntityName == destination else { return nil }
        return try map { .record(try builder.record(typed: $0, depth: depth)) }
    }
}

extension Array: _BoxingCollection {
    var _boxingElements: [Any] { map { $0 } }
    static var _boxingElementType: Any.Type { Element.self }
    static var _isOrderedBoxingCollection: Bool { true }
}

extension Set: _BoxingCollection {
    var _boxingElements: [Any] { map { $0 } }
    static var _boxingElementType: Any.Type { Element.self }
    static var _isOrderedBoxingCollection: Bool { false }
}
