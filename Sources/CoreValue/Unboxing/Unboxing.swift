import Foundation

/// The error domain of unboxing errors (the seed's).
public let CVErrorDomain = "CVErrorDomain"
/// The code of an unboxing failure (the seed's).
public let CVErrorUnboxFailed = 1

extension NSError {
    /// An unboxing error: domain ``CVErrorDomain``, code ``CVErrorUnboxFailed``, the message as its
    /// localized description.
    convenience init(unboxErrorMessage message: String) {
        self.init(domain: CVErrorDomain, code: CVErrorUnboxFailed, userInfo: [NSLocalizedDescriptionKey: message])
    }
}

/// What unboxing reads for one key: an attribute value, a related object, or the object's ID.
public enum ManagedValue {
    /// A non-null attribute value.
    case attribute(AttributeValue)
    /// The destination of a to-one relationship, or a member of a to-many one.
    case object(ManagedObject)
    /// The object's own ID (the key `objectID`).
    case objectID(ManagedObjectID)
}

/// A type that can be read back from a managed object's value.
public protocol Unboxing {
    /// The type produced; the conforming type itself.
    associatedtype StructureType = Self

    /// Reads a value.
    ///
    /// - Throws: An `NSError` in ``CVErrorDomain`` with code ``CVErrorUnboxFailed`` saying what was expected
    ///   and what was found.
    static func unbox(_ value: ManagedValue) throws -> StructureType
}

/// A struct that can be built from a ``ManagedObject``, usually with `curry` and the unboxing operators:
///
/// ```swift
/// static func fromObject(_ o: ManagedObject) throws -> Employee {
///     try curry(self.init)
///         <^> o <|? "objectID"
///         <^> o <| "name"
///         <^> o <| "age"
///         <^> o <|? "position"
/// }
/// ```
public protocol UnboxingStruct: Unboxing {
    /// Builds the struct from an object.
    ///
    /// - Throws: Unboxing errors (``CVErrorDomain``).
    static func fromObject(_ object: ManagedObject) throws -> Self
}

extension UnboxingStruct where StructureType == Self {
    /// Unboxes a related object with ``fromObject(_:)``.
    ///
    /// While an object is being unboxed, relationships that lead back to it read as absent (`nil` for
    /// `<|?`, left out by `<||`, an error for a required `<|`), so cycles of inverse relationships end.
    ///
    /// - Throws: An unboxing error when `value` is no object, or what ``fromObject(_:)`` throws.
    public static func unbox(_ value: ManagedValue) throws -> Self {
        guard case .object(let object) = value else {
            throw NSError(unboxErrorMessage: "expected an object for \(Self.self), found \(value.kindDescription)")
        }
        // Each level is a call of the user's `fromObject`, which can't be walked without recursion: bound it. An
        // object without a context came from boxing, which bounds its graph's depth the same way.
        let context = object.managedObjectContext
        let nesting = context.map { $0.unboxingNesting } ?? EphemeralUnboxing.nesting
        guard nesting < ManagedObjectContext.maximumGraphDepth else {
            throw CVManagedStructError.nestingTooDeep(
                entity: object.entity.name, what: "a graph of related objects",
                limit: ManagedObjectContext.maximumGraphDepth)
        }
        // Objects without a context (linked with setObject, at any depth) count on the current thread.
        if let context { context.unboxingNesting += 1 } else { EphemeralUnboxing.nesting += 1 }
        object.unboxingDepth += 1
        defer {
            object.unboxingDepth -= 1
            if let context { context.unboxingNesting -= 1 } else { EphemeralUnboxing.nesting -= 1 }
        }
        return try fromObject(object)
    }
}

extension Unboxing where Self: AttributeValueConvertible, StructureType == Self {
    /// Reads an attribute value that converts to `Self` without loss.
    ///
    /// - Throws: An unboxing error naming the expected and found types.
    public static func unbox(_ value: ManagedValue) throws -> Self {
        guard case .attribute(let attribute) = value, let result = Self(attributeValue: attribute) else {
            throw NSError(unboxErrorMessage: "expected \(Self.self), found \(value.kindDescription)")
        }
        return result
    }
}

extension Unboxing
where
    Self: RawRepresentable, Self.RawValue: Unboxing, Self.RawValue.StructureType == Self.RawValue,
    StructureType == Self
{
    /// Reads the raw value and builds the enum case.
    ///
    /// - Throws: An unboxing error when the raw value has the wrong type or names no case.
    public static func unbox(_ value: ManagedValue) throws -> Self {
        guard let result = Self(rawValue: try RawValue.unbox(value)) else {
            throw NSError(unboxErrorMessage: "no case of \(Self.self) has the stored raw value")
        }
        return result
    }
}

extension Boxing where Self: AttributeValueConvertible {
    /// Writes the value into an attribute.
    ///
    /// - Throws: ``CVManagedStructError`` for an unknown key or a type that does not fit.
    public func box(_ object: ManagedObject, withKey key: String) throws {
        try object.setValue(attributeValue, forKey: key)
    }
}

extension Boxing where Self: RawRepresentable, Self.RawValue: AttributeValueConvertible {
    /// Writes the raw value into an attribute.
    ///
    /// - Throws: ``CVManagedStructError`` for an unknown key or a type that does not fit.
    public func box(_ object: ManagedObject, withKey key: String) throws {
        try object.setValue(rawValue.attributeValue, forKey: key)
    }
}

extension ManagedValue {
    /// What the value is, for error messages (never the value itself).
    var kindDescription: String {
        switch self {
        case .attribute(let value): return value.typeDescription
        case .object(let object): return "an object of entity \(object.entity.name)"
        case .objectID: return "an object ID"
        }
    }
}

/// How many context-less objects are being unboxed inside one another on the current thread.
///
/// A pthread thread-local: it is read and written twice per unboxed object, and Foundation's
/// `Thread.threadDictionary` (a dictionary of boxed values per thread) cost several microseconds each time.
enum EphemeralUnboxing {
    /// The thread-local count; when the system had no key left, the thread dictionary serves.
    private static let counter = ThreadCounter()
    private static let fallbackKey = "org.corevalue.ephemeralUnboxingNesting"

    static var nesting: Int {
        get {
            guard counter.isAvailable else { return Thread.current.threadDictionary[fallbackKey] as? Int ?? 0 }
            return counter.value
        }
        set {
            guard counter.isAvailable else { return Thread.current.threadDictionary[fallbackKey] = newValue }
            counter.value = newValue
        }
    }
}
