/// A typed, named property of an entity.
///
/// ```swift
/// Attribute("id", .int64, unique: true)
/// Attribute("age", .int16, optional: true)
/// ```
public struct Attribute: Sendable, Hashable {
    /// The attribute's name, the key used by `setValue(_:forKey:)` and the unboxing operators.
    public var name: String
    /// The storage type.
    public var type: AttributeType
    /// Whether the attribute may be `nil` (a nullable column).
    public var isOptional: Bool
    /// The value a new object starts with, if any.
    public var defaultValue: AttributeValue?
    /// Whether no two objects of the entity may share a value (a `UNIQUE` constraint).
    public var isUnique: Bool
    /// Whether a delete's history entry keeps the attribute's value (Core Data's "Preserve After Deletion"):
    /// a ``HistoryChange``'s tombstone holds it, beside the unique attributes' values.
    public var preservesValueAfterDeletion: Bool

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - name: The attribute's key.
    ///   - type: The storage type.
    ///   - optional: Whether the attribute may be nil; `false` by default.
    ///   - unique: Whether values must be unique across the entity; `false` by default.
    ///   - defaultValue: The value a new object starts with.
    ///   - preservedAfterDeletion: Whether a delete's history entry keeps the value; `false` by default.
    public init(
        _ name: String,
        _ type: AttributeType,
        optional: Bool = false,
        unique: Bool = false,
        defaultValue: AttributeValue? = nil,
        preservedAfterDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.isUnique = unique
        self.defaultValue = defaultValue
        self.preservesValueAfterDeletion = preservedAfterDeletion
    }
}
