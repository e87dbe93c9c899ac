@_spi(Reflection) import Swift

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

    /// A reader for a field whose declared type is `V` or `V?` with `V: AttributeValueConvertible`; `nil` for
    /// any other field (enums with raw values, `NSDecimalNumber`, custom `Boxing` types take the general path).
    init?(_ keyPath: PartialKeyPath<T>) {
        let valueType = type(of: keyPath).valueType
        if let convertible = valueType as? any AttributeValueConvertible.Type {
            guard let read = Self.plain(keyPath, convertible) else { return nil }
            self.read = read
        } else if let optional = valueType as? any _OptionalAttributeValue.Type,
            let read = Self.optional(keyPath, optional)
        {
            self.read = read
        } else {
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
}

extension Optional: _OptionalAttributeValue where Wrapped: AttributeValueConvertible {
    var _attributeValue: AttributeValue { self?.attributeValue ?? .null }
}
