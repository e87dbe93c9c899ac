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
        } else if let optional = valueType as? any _OptionalBoxing.Type,
            let wrapped = optional._wrappedType as? any AttributeValueConvertible.Type,
            let read = Self.optional(keyPath, wrapped)
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
        // projection (the largest cost of boxing a flat struct).
        if let offset = MemoryLayout<T>.offset(of: typed) {
            // The field's type formed once, here, not per read.
            let fieldType = V.self
            return { base in Self.load(fieldType, base, offset).attributeValue }
        }
        return { base in base.assumingMemoryBound(to: T.self).pointee[keyPath: typed].attributeValue }
    }

    private static func optional<V: AttributeValueConvertible>(_ keyPath: PartialKeyPath<T>, _: V.Type)
        -> ((UnsafeRawPointer) -> AttributeValue)?
    {
        guard let typed = keyPath as? KeyPath<T, V?> else { return nil }
        if let offset = MemoryLayout<T>.offset(of: typed) {
            let fieldType = V?.self
            return { base in Self.load(fieldType, base, offset)?.attributeValue ?? .null }
        }
        return { base in base.assumingMemoryBound(to: T.self).pointee[keyPath: typed]?.attributeValue ?? .null }
    }

    /// A copy of the `V` stored `offset` bytes into the `T` at `base` (an offset `MemoryLayout.offset(of:)`
    /// gave for a stored property of type `V`, so the memory there is an initialized, aligned `V`).
    @inline(__always)
    private static func load<V>(_: V.Type, _ base: UnsafeRawPointer, _ offset: Int) -> V {
        base.load(fromByteOffset: offset, as: V.self)
    }
}
