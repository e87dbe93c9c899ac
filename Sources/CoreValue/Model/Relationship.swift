/// A relationship from one entity to another.
///
/// ```swift
/// Relationship("employees", to: "Employee", .orderedToMany, inverse: "company")
/// ```
public struct Relationship: Sendable, Hashable {
    /// How many objects a relationship holds and whether their order is kept.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// At most one destination object.
        case toOne
        /// A list of destination objects whose order is stored.
        case orderedToMany
        /// A set of destination objects.
        case unorderedToMany
    }

    /// What deleting the source object does to the destination objects.
    public enum DeleteRule: String, Sendable, Hashable, Codable {
        /// Unlink the destination objects (clear their inverse); they stay.
        case nullify
        /// Delete the destination objects too.
        case cascade
        /// Refuse to delete the source while it has destination objects.
        case deny
        /// Leave the destination objects alone (Core Data's "No Action"): the context neither loads nor
        /// changes them when the source is deleted, so a delete costs no read of them. The store still keeps no
        /// dangling link (a foreign key to the deleted row is set to NULL, its join rows go), so once saved the
        /// destinations no longer link to it; objects already in the context still hold the deleted object,
        /// which reads as absent.
        case noAction
    }

    /// The relationship's name, the key used by `setValue(_:forKey:)` and the unboxing operators.
    public var name: String
    /// The name of the destination entity.
    public var destination: String
    /// To-one, ordered to-many or unordered to-many.
    public var kind: Kind
    /// The name of the inverse relationship on the destination entity, if any.
    public var inverse: String?
    /// What deleting the source does to the destination objects.
    public var deleteRule: DeleteRule

    /// Creates a relationship.
    ///
    /// - Parameters:
    ///   - name: The key of the relationship.
    ///   - destination: The destination entity's name.
    ///   - kind: To-one (the default), ordered to-many or unordered to-many.
    ///   - inverse: The inverse relationship on the destination, if any.
    ///   - deleteRule: What deleting the source does to the destination objects; `.nullify` by default.
    public init(
        _ name: String,
        to destination: String,
        _ kind: Kind = .toOne,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify
    ) {
        self.name = name
        self.destination = destination
        self.kind = kind
        self.inverse = inverse
        self.deleteRule = deleteRule
    }

    /// Whether the relationship holds many objects.
    public var isToMany: Bool { kind != .toOne }
}
