/// The names of a type's stored properties by key path, read once per type from the runtime's field
/// metadata (``StructFields``): the names boxing writes attributes and relationships under, so a key path on a
/// user's struct names a column.
enum FieldNames {
    // Never emptied, and bounded all the same: one entry per struct type a typed query names, and a program
    // declares finitely many types (generic instantiations included).
    private static let cache = LockedTable<ObjectIdentifier, [AnyKeyPath: String]>()

    /// The stored property `keyPath` names on `type`, or `nil` (a computed property, or no metadata).
    static func name<T>(of keyPath: AnyKeyPath, in type: T.Type) -> String? {
        names(of: type)[keyPath]
    }

    private static func names<T>(of type: T.Type) -> [AnyKeyPath: String] {
        let id = ObjectIdentifier(type)
        if let known = cache[id] { return known }
        var found: [AnyKeyPath: String] = [:]
        // Classes and types without field metadata list nothing; their key paths stay unnamed.
        for field in StructFields.listedKeyPaths(of: type).fields { found[field.keyPath] = field.name }
        return cache.keep(found, for: id)
    }
}
