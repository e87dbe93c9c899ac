/// A value that stands for one of several structs and boxes as the one it holds: an enum with a case per
/// subentity of a hierarchy, for a relationship whose destination is their parent (or an abstract entity).
///
/// Structs don't inherit, so a relationship to `Media` cannot hold `Photo`s and `Video`s as one struct type.
/// An enum over them reads each object as its own entity's struct (its `fromObject` switches on the
/// object's entity) and, adopting this protocol, boxes each case as the struct it holds:
///
/// ```swift
/// enum AnyMedia: CVManagedStruct, BoxingVariant {
///     static let EntityName = "Media"
///     case photo(Photo), video(Video)
///     var boxedStruct: any BoxingStruct {
///         switch self {
///         case .photo(let photo): photo
///         case .video(let video): video
///         }
///     }
///     static func fromObject(_ o: ManagedObject) throws -> AnyMedia { ... }
/// }
///
/// struct Album: CVManagedUniqueStruct {
///     var name: String
///     var items: [AnyMedia]    // Relationship("items", to: "Media", .orderedToMany)
///     ...
/// }
/// ```
///
/// Only a relationship whose destination has subentities looks inside a variant; saving the enum itself
/// boxes an object of its `EntityName`, which is refused when that entity is abstract.
public protocol BoxingVariant {
    /// The struct this value holds, boxed in its place.
    var boxedStruct: any BoxingStruct { get }
}
