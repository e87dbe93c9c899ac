@_spi(Reflection) import Swift
import Foundation

/// The stored properties of a struct type, with a key path to each: how boxing reads fields without a
/// `Mirror` per value.
///
/// This file is the library's one room for reflection and raw reads: field offsets, raw pointers to a struct,
/// and the standard library's `_forEachFieldWithKeyPath(of:options:)` (`@_spi(Reflection)`): it lists a type's
/// stored properties in declaration order, each with its `PartialKeyPath`, once per type. Where it cannot (a
/// type the runtime does not describe), boxing falls back to `Mirror` (see ``LayoutCache/Reflection``); the
/// boxing tests run both ways.
enum StructFields {
    /// Reads one field from a pointer to its struct (made by ``KeyPathReader`` or ``StandardFieldReaders``,
    /// called inside ``withAddress(of:_:)``).
    typealias Read = (UnsafeRawPointer) -> AttributeValue

    /// The stored properties of `type` in declaration order, or `nil` when they cannot be listed.
    static func keyPaths<T>(of type: T.Type) -> [(name: String, keyPath: PartialKeyPath<T>)]? {
        let (fields, complete) = listedKeyPaths(of: type)
        return complete ? fields : nil
    }

    /// The stored properties of `type` that the runtime lists, in declaration order, and whether that is all of
    /// them (a class, or a type without field metadata, lists none).
    static func listedKeyPaths<T>(of type: T.Type)
        -> (fields: [(name: String, keyPath: PartialKeyPath<T>)], complete: Bool)
    {
        var fields: [(name: String, keyPath: PartialKeyPath<T>)] = []
        let complete = _forEachFieldWithKeyPath(of: type, options: []) { name, keyPath in
            fields.append((String(cString: name), keyPath))
            return true
        }
        return (fields, complete)
    }

    /// Calls `body` with the address of `value`, valid only inside `body`: where ``KeyPathReader``s read
    /// fields at their offsets.
    static func withAddress<T, R>(of value: T, _ body: (UnsafeRawPointer) throws -> R) rethrows -> R {
        try withUnsafePointer(to: value) { try body(UnsafeRawPointer($0)) }
    }

    /// `property` of `value` seen as a `U`, for a caller that checked `U.self == T.self` (a conformance of `T`
    /// opened as `U`): read in place, without a dynamic cast per value.
    @inline(__always)
    static func read<T, U, V>(_ value: T, as _: U.Type, _ property: (U) -> V) -> V {
        withUnsafePointer(to: value) { property(UnsafeRawPointer($0).assumingMemoryBound(to: U.self).pointee) }
    }
}

/// Reads one field through a typed key path: `T.field` as an attribute value, without an existential.
struct KeyPathReader<T> {
    /// Reads the field from a pointer to a `T`.
    let read: StructFields.Read
    /// The attribute type every non-null value read has, when the field's declared type says so (its
    /// `attributeType`): a value of the attribute's own type needs no conversion.
    let valueType: AttributeType?

    /// A reader for a field whose declared type is `V` or `V?` with `V: AttributeValueConvertible`; `nil` for
    /// any other field (enums with raw values, `NSDecimalNumber`, custom `Boxing` types take the general path).
    init?(_ keyPath: PartialKeyPath<T>) {
        let valueType = type(of: keyPath).valueType
        if let offset = MemoryLayout<T>.offset(of: keyPath),
            let (read, type) = StandardFieldReaders.reader(for: valueType, at: offset)
        {
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

    private static func plain<V: AttributeValueConvertible>(_ keyPath: PartialKeyPath<T>, _: V.Type)
        -> StructFields.Read?
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
        -> StructFields.Read?
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

/// Readers specialized for a stored property of one of the standard types (or an optional of one): a load
/// at the field's offset and the value's case, where the generic readers of ``KeyPathReader`` went through
/// the field type's witness table and, for an optional, the runtime's value witnesses, several times the
/// work per field. Each reads the value through the type's own
/// ``AttributeValueConvertible/attributeValue``, specialized.
///
/// Outside the generic `KeyPathReader<T>`, so that each call below, with its type written out, is
/// specialized: helpers generic over the struct type as well left their readers unspecialized.
enum StandardFieldReaders {
    typealias Reader = (read: StructFields.Read, type: AttributeType)

    /// The reader of a field of declared type `type` at `offset`; `nil` for any other type.
    static func reader(for type: Any.Type, at offset: Int) -> Reader? {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self): return plain(String.self, offset)
        case ObjectIdentifier(String?.self): return optional(String.self, offset)
        case ObjectIdentifier(Int.self): return plain(Int.self, offset)
        case ObjectIdentifier(Int?.self): return optional(Int.self, offset)
        case ObjectIdentifier(Int64.self): return plain(Int64.self, offset)
        case ObjectIdentifier(Int64?.self): return optional(Int64.self, offset)
        case ObjectIdentifier(Int32.self): return plain(Int32.self, offset)
        case ObjectIdentifier(Int32?.self): return optional(Int32.self, offset)
        case ObjectIdentifier(Int16.self): return plain(Int16.self, offset)
        case ObjectIdentifier(Int16?.self): return optional(Int16.self, offset)
        case ObjectIdentifier(Double.self): return plain(Double.self, offset)
        case ObjectIdentifier(Double?.self): return optional(Double.self, offset)
        case ObjectIdentifier(Float.self): return plain(Float.self, offset)
        case ObjectIdentifier(Float?.self): return optional(Float.self, offset)
        case ObjectIdentifier(Bool.self): return plain(Bool.self, offset)
        case ObjectIdentifier(Bool?.self): return optional(Bool.self, offset)
        case ObjectIdentifier(Date.self): return plain(Date.self, offset)
        case ObjectIdentifier(Date?.self): return optional(Date.self, offset)
        case ObjectIdentifier(Data.self): return plain(Data.self, offset)
        case ObjectIdentifier(Data?.self): return optional(Data.self, offset)
        case ObjectIdentifier(Decimal.self): return plain(Decimal.self, offset)
        case ObjectIdentifier(Decimal?.self): return optional(Decimal.self, offset)
        case ObjectIdentifier(UUID.self): return plain(UUID.self, offset)
        case ObjectIdentifier(UUID?.self): return optional(UUID.self, offset)
        case ObjectIdentifier(URL.self): return plain(URL.self, offset)
        case ObjectIdentifier(URL?.self): return optional(URL.self, offset)
        // Any other type is read through its key path (`KeyPathReader`): correct, only slower. A standard
        // type belongs above; `StandardFieldReaderTests` fails for one that is missing.
        default: return nil
        }
    }

    /// A `V` field at `offset`: `offset` comes from `MemoryLayout.offset(of:)` for a stored property of type
    /// `V`, so the memory there is an initialized, aligned `V`.
    private static func plain<V: AttributeValueConvertible>(_: V.Type, _ offset: Int) -> Reader {
        ({ base in base.load(fromByteOffset: offset, as: V.self).attributeValue }, V.attributeType)
    }

    /// A `V?` field at `offset`; `nil` reads as `.null`.
    private static func optional<V: AttributeValueConvertible>(_: V.Type, _ offset: Int) -> Reader {
        ({ base in base.load(fromByteOffset: offset, as: V?.self)?.attributeValue ?? .null }, V.attributeType)
    }
}
