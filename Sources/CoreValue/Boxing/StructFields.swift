@_spi(Reflection) import Swift
import Foundation

/// The stored properties of a struct type, with a key path to each: how boxing reads fields without a
/// `Mirror` per value.
///
/// This is the one place that uses the standard library's `_forEachFieldWithKeyPath(of:options:)`
/// (`@_spi(Reflection)`): it lists a type's stored properties in declaration order, each with its
/// `PartialKeyPath`, once per type. Where it cannot (a type the runtime does not describe), boxing falls back
/// to `Mirror` (see ``LayoutCache/Reflection``); the boxing tests run both ways.
enum StructFields {
    /// The stored properties of `type` in declaration order, or `nil` when they cannot be listed.
    static func keyPaths<T>(of type: T.Type) -> [(name: String, keyPath: PartialKeyPath<T>)]? {
        var fields: [(name: String, keyPath: PartialKeyPath<T>)] = []
        let complete = _forEachFieldWithKeyPath(of: type, options: []) { name, keyPath in
            fields.append((String(cString: name), keyPath))
            return true
        }
        return complete ? fields : nil
    }
}

/// Reads one field through a typed key path: `T.field` as an attribute value, without an existential.
struct KeyPathReader<T> {
    /// Reads the field from a pointer to a `T`.
    let read: (UnsafeRawPointer) -> AttributeValue
    /// The attribute type every non-null value read has, when the field's declared type says so (its
    /// `attributeType`): a value of the attribute's own type needs no conversion.
    let valueType: AttributeType?

    /// A reader for a field whose declared type is `V` or `V?` with `V: AttributeValueConvertible`; `nil` for
    /// any other field (enums with raw values, `NSDecimalNumber`, custom `Boxing` types take the general path).
    init?(_ keyPath: PartialKeyPath<T>) {
        let valueType = type(of: keyPath).valueType
        if let offset = MemoryLayout<T>.offset(of: keyPath), let (read, type) = Self.concrete(valueType, at: offset) {
            self.read = read
            self.valueType = type
        } else if let convertible = valueType as? any AttributeValueConvertible.Type {
            self.valueType = convertible.attributeType
            guard let read = Self.plain(keyPath, convertible) else { return nil }
            self.read = read
        } else if let optional = valueType as? any _OptionalAttributeValue.Type,
            let read = Self.optional(keyPath, optional)
        {
            self.read = read
            self.valueType = optional._wrappedAttributeType
        } else {
            return nil
        }
    }

    /// A reader specialized for a stored property of one of the standard types (or an optional of one) at
    /// `offset`: a load and the value's case, where the generic readers went through `V`'s witness table
    /// and, for an optional, the runtime's value witnesses (about 110 and 370 instructions a field).
    /// Each reader does what the type's ``AttributeValueConvertible/attributeValue`` does.
    private static func concrete(_ type: Any.Type, at offset: Int)
        -> ((UnsafeRawPointer) -> AttributeValue, AttributeType)?
    {
        // One closure per type, written out: a generic helper's closures stayed generic (unspecialized) and
        // cost more than the readers they replace.
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self):
            return ({ AttributeValue.string($0.load(fromByteOffset: offset, as: String.self)) }, .string)
        case ObjectIdentifier(String?.self):
            return (
                { $0.load(fromByteOffset: offset, as: String?.self).map { AttributeValue.string($0) } ?? .null },
                .string
            )
        case ObjectIdentifier(Int.self):
            return ({ AttributeValue.int64(Int64($0.load(fromByteOffset: offset, as: Int.self))) }, .int64)
        case ObjectIdentifier(Int?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Int?.self).map { AttributeValue.int64(Int64($0)) } ?? .null },
                .int64
            )
        case ObjectIdentifier(Int64.self):
            return ({ AttributeValue.int64($0.load(fromByteOffset: offset, as: Int64.self)) }, .int64)
        case ObjectIdentifier(Int64?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Int64?.self).map { AttributeValue.int64($0) } ?? .null }, .int64
            )
        case ObjectIdentifier(Int32.self):
            return ({ AttributeValue.int32($0.load(fromByteOffset: offset, as: Int32.self)) }, .int32)
        case ObjectIdentifier(Int32?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Int32?.self).map { AttributeValue.int32($0) } ?? .null }, .int32
            )
        case ObjectIdentifier(Int16.self):
            return ({ AttributeValue.int16($0.load(fromByteOffset: offset, as: Int16.self)) }, .int16)
        case ObjectIdentifier(Int16?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Int16?.self).map { AttributeValue.int16($0) } ?? .null }, .int16
            )
        case ObjectIdentifier(Double.self):
            return ({ AttributeValue.double($0.load(fromByteOffset: offset, as: Double.self)) }, .double)
        case ObjectIdentifier(Double?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Double?.self).map { AttributeValue.double($0) } ?? .null },
                .double
            )
        case ObjectIdentifier(Float.self):
            return ({ AttributeValue.float($0.load(fromByteOffset: offset, as: Float.self)) }, .float)
        case ObjectIdentifier(Float?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Float?.self).map { AttributeValue.float($0) } ?? .null }, .float
            )
        case ObjectIdentifier(Bool.self):
            return ({ AttributeValue.bool($0.load(fromByteOffset: offset, as: Bool.self)) }, .bool)
        case ObjectIdentifier(Bool?.self):
            return ({ $0.load(fromByteOffset: offset, as: Bool?.self).map { AttributeValue.bool($0) } ?? .null }, .bool)
        case ObjectIdentifier(Date.self):
            return ({ AttributeValue.date($0.load(fromByteOffset: offset, as: Date.self)) }, .date)
        case ObjectIdentifier(Date?.self):
            return ({ $0.load(fromByteOffset: offset, as: Date?.self).map { AttributeValue.date($0) } ?? .null }, .date)
        case ObjectIdentifier(Data.self):
            return ({ AttributeValue.data($0.load(fromByteOffset: offset, as: Data.self)) }, .data)
        case ObjectIdentifier(Data?.self):
            return ({ $0.load(fromByteOffset: offset, as: Data?.self).map { AttributeValue.data($0) } ?? .null }, .data)
        case ObjectIdentifier(Decimal.self):
            return ({ AttributeValue.decimal($0.load(fromByteOffset: offset, as: Decimal.self)) }, .decimal)
        case ObjectIdentifier(Decimal?.self):
            return (
                { $0.load(fromByteOffset: offset, as: Decimal?.self).map { AttributeValue.decimal($0) } ?? .null },
                .decimal
            )
        case ObjectIdentifier(UUID.self):
            return ({ AttributeValue.uuid($0.load(fromByteOffset: offset, as: UUID.self)) }, .uuid)
        case ObjectIdentifier(UUID?.self):
            return ({ $0.load(fromByteOffset: offset, as: UUID?.self).map { AttributeValue.uuid($0) } ?? .null }, .uuid)
        default:
            return nil
        }
    }

    private static func plain<V: AttributeValueConvertible>(_ keyPath: PartialKeyPath<T>, _: V.Type)
        -> ((UnsafeRawPointer) -> AttributeValue)?
    {
        guard let typed = keyPath as? KeyPath<T, V> else { return nil }
        // A stored property has a fixed offset in the struct: reading it there skips the key path's generic
        // projection (the largest cost of boxing a flat struct). The offset comes from
        // `MemoryLayout.offset(of:)` for a stored property of type `V`, so the memory there is an
        // initialized, aligned `V`.
        if let offset = MemoryLayout<T>.offset(of: typed) {
            // No `Self.` inside the reader: a static of the generic `KeyPathReader<T>` called there looked up
            // that type's metadata on every read.
            return { base in base.load(fromByteOffset: offset, as: V.self).attributeValue }
        }
        return { base in base.assumingMemoryBound(to: T.self).pointee[keyPath: typed].attributeValue }
    }

    /// A reader of a `V?` field, generic over the optional type itself: its metadata comes with the reader
    /// rather than being looked up as `Optional<V>` on every read.
    private static func optional<W: _OptionalAttributeValue>(_ keyPath: PartialKeyPath<T>, _: W.Type)
        -> ((UnsafeRawPointer) -> AttributeValue)?
    {
        guard let typed = keyPath as? KeyPath<T, W> else { return nil }
        if let offset = MemoryLayout<T>.offset(of: typed) {
            return { base in base.load(fromByteOffset: offset, as: W.self)._attributeValue }
        }
        return { base in base.assumingMemoryBound(to: T.self).pointee[keyPath: typed]._attributeValue }
    }
}

/// An optional whose wrapped type converts to an attribute value: `nil` is `.null`.
protocol _OptionalAttributeValue {
    var _attributeValue: AttributeValue { get }
    /// The attribute type of a non-nil value.
    static var _wrappedAttributeType: AttributeType { get }
}

extension Optional: _OptionalAttributeValue where Wrapped: AttributeValueConvertible {
    var _attributeValue: AttributeValue { self?.attributeValue ?? .null }
    static var _wrappedAttributeType: AttributeType { Wrapped.attributeType }
}
