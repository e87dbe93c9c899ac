import Foundation

extension ManagedObject {
    /// The value of an attribute; `.null` when it has none.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` when the entity has no such attribute.
    public func value(forKey key: String) throws -> AttributeValue {
        attribute(at: try info.position(key)) ?? .null
    }

    /// The value of an attribute as a Swift type, or `nil` when it is null.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``, or
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` when the value does not convert
    ///   to `T` without loss.
    public func value<T: AttributeValueConvertible>(forKey key: String, as type: T.Type = T.self) throws -> T? {
        let value = try self.value(forKey: key)
        if value.isNull { return nil }
        guard let result = T(attributeValue: value) else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: "\(T.self)", found: value.typeDescription)
        }
        return result
    }

    /// Sets an attribute, converting losslessly to its type; `.null` clears it.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)``,
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)``, or
    ///   ``CVManagedStructError/invalidObject(message:)`` for a deleted object.
    public func setValue(_ value: AttributeValue, forKey key: String) throws {
        try assign(try converted(value, forKey: key), forKey: key)
    }

    /// Sets an attribute from a Swift value; `nil` clears it.
    ///
    /// - Throws: See `setValue(_:forKey:)`.
    public func setValue<T: AttributeValueConvertible>(_ value: T?, forKey key: String) throws {
        try setValue(value?.attributeValue ?? .null, forKey: key)
    }

    /// A value converted to the type of the attribute `key`.
    func converted(_ value: AttributeValue, forKey key: String) throws -> AttributeValue {
        let attribute = try info.attribute(key)
        guard let converted = value.converted(to: attribute.type) else {
            throw CVManagedStructError.typeMismatch(
                entity: entity.name, key: key, expected: attribute.type.rawValue, found: value.typeDescription)
        }
        return converted
    }

    /// Stores an already converted value, recording the change.
    func assign(_ value: AttributeValue, forKey key: String) throws {
        try assign(value, at: try info.position(key))
    }

    /// Stores an already converted value at a position of the entity's layout, recording the change.
    func assign(_ value: AttributeValue, at position: Int) throws {
        guard !isDeletedFlag else {
            throw CVManagedStructError.invalidObject(message: "\(objectID) was deleted")
        }
        let old = attribute(at: position) ?? .null
        guard old != value else { return }
        let key = info.layout.names[position]
        // The context (an unowned load) and the value before the first unsaved change (a hashed lookup) once each,
        // for the undo log and for the change tracking alike.
        let context = managedObjectContext
        let original = pending?.originalAttributes[key]
        context?.undoLog?.recordAttribute(self, key, value: old, original: original)
        if let original {
            if original == value { originalAttributes[key] = nil }
        } else {
            // Room for a few changed values at once: the first two made the table and then grew it. A new
            // table costs about 700 instructions, `reserveCapacity` on the empty one about 1,150 (both run
            // unspecialized in the standard library).
            if pending?.originalAttributes.isEmpty ?? true {
                originalAttributes = Dictionary(minimumCapacity: min(info.layout.count, 8))
            }
            originalAttributes[key] = old
        }
        setAttribute(value, at: position)
        if let pending, pending.upsertKey != nil, pending.upsertAttributes?.contains(key) == false {
            pending.upsertAttributes?.insert(key)
        }
        context?.attributeDidChange(self, at: position, key: key, from: old, to: value)
    }

    /// Takes a stored row's version and attribute values (not its links).
    func loadAttributes(from snapshot: RowSnapshot) {
        // A row read again at the version this context's own save gave it is still that save's.
        if version != snapshot.version { isVersionFromOwnSave = false }
        version = snapshot.version
        if snapshot.attributes.isComplete, snapshot.attributes.layout.hasSameNames(as: info.layout) {
            // A store hands every attribute of the entity in its layout (the Store contract): share its
            // storage rather than copy each value.
            replaceAttributes(with: snapshot.attributes)
        } else {
            changeAttributes { values in
                for (position, attribute) in info.entity.attributes.enumerated() {
                    values[at: position] = snapshot.attributes[attribute.name] ?? .null
                }
            }
        }
    }

    /// The position of the attribute `name` in the object's layout, or `nil` when the entity has no such
    /// attribute; tries ``nextReadHint`` before the layout's dictionary.
    func readPosition(of name: String) -> Int? {
        let names = info.layout.names
        let hint = Int(nextReadHint)
        let position: Int
        if hint < names.count, names[hint] == name {
            position = hint
        } else if let found = info.layout.position(of: name) {
            position = found
        } else {
            return nil
        }
        nextReadHint = Int32(truncatingIfNeeded: position + 1)
        return position
    }
}
