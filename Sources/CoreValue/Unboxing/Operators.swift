import Foundation

/// Applies a (curried) function to an unboxed value: `curry(Employee.init) <^> o <| "name" <^> ...`.
infix operator <^> : AdditionPrecedence
/// Reads a required value.
infix operator <| : MultiplicationPrecedence
/// Reads a to-many relationship as an array or a set.
infix operator <|| : MultiplicationPrecedence
/// Reads an optional value.
infix operator <|? : MultiplicationPrecedence

/// Applies `f` to `a`.
///
/// - Throws: What `f` throws.
@inlinable
public func <^> <A, B>(f: (A) throws -> B, a: A) rethrows -> B {
    try f(a)
}

/// Reads the required value of `key`: an attribute, a to-one relationship, or `"objectID"`.
///
/// - Throws: An unboxing error (``CVErrorDomain``, ``CVErrorUnboxFailed``) naming the key and type when the
///   value is missing, null, of another type, or does not fit without loss.
@inlinable
public func <| <A: Unboxing>(object: ManagedObject, key: String) throws -> A where A == A.StructureType {
    if let position = attributePosition(object, key), let attribute = nonNullAttribute(object, at: position) {
        if let value = exactUnbox(attribute, as: A.self) { return value }
        return try unboxWrapping(object, key, A.self) { try A.unbox(.attribute(attribute)) }
    }
    guard let value = try unboxSource(object, key, A.self) else {
        let cycle = try isCycle(object, key)
        throw unboxError(object, key, A.self, cycle ? "it leads back to an object being unboxed" : "no value")
    }
    return try unboxWrapping(object, key, A.self) { try A.unbox(value) }
}

/// Reads the optional value of `key`: `nil` when missing or null.
///
/// - Throws: An unboxing error when a value is present but of another type, or the key is unknown.
@inlinable
public func <|? <A: Unboxing>(object: ManagedObject, key: String) throws -> A? where A == A.StructureType {
    if let position = attributePosition(object, key) {
        guard let attribute = nonNullAttribute(object, at: position) else { return nil }
        if let value = exactUnbox(attribute, as: A.self) { return value }
        return try unboxWrapping(object, key, A.self) { try A.unbox(.attribute(attribute)) }
    }
    guard let value = try unboxSource(object, key, A.self) else { return nil }
    return try unboxWrapping(object, key, A.self) { try A.unbox(value) }
}

/// Reads a to-many relationship as an array, in stored order for an ordered one; `[]` when empty.
///
/// - Throws: An unboxing error naming the key when it is no to-many relationship or a member fails.
@inlinable
public func <|| <A: Unboxing>(object: ManagedObject, key: String) throws -> [A] where A == A.StructureType {
    try members(object, key, A.self).map { member in
        try unboxWrapping(object, key, A.self) { try A.unbox(.object(member)) }
    }
}

/// Reads a to-many relationship as a set; empty when it has no members.
///
/// - Throws: See the array variant.
@inlinable
public func <|| <A: Unboxing & Hashable>(object: ManagedObject, key: String) throws -> Set<A>
where A == A.StructureType {
    var result = Set<A>()
    for member in try members(object, key, A.self) {
        result.insert(try unboxWrapping(object, key, A.self) { try A.unbox(.object(member)) })
    }
    return result
}

/// The position of the attribute `key` in the object's values, or `nil` for anything else (a relationship,
/// the `objectID`, an unknown key), which ``unboxSource(_:_:_:)`` then reads or reports. With
/// ``nonNullAttribute(_:at:)``, the usual case without an optional ``ManagedValue`` per value: destroying one
/// goes through the runtime's generic witnesses, for every field read.
@usableFromInline
func attributePosition(_ object: ManagedObject, _ key: String) -> Int? {
    // "objectID" is never an attribute (the model reserves it), so it is never found here.
    object.readPosition(of: key)
}

/// The value at a position of the object's values; `nil` for a null.
@usableFromInline
func nonNullAttribute(_ object: ManagedObject, at position: Int) -> AttributeValue? {
    guard let value = object.attribute(at: position), !value.isNull else { return nil }
    return value
}

/// A value of the standard attribute type `A` held in its own case (a `String` field read from a `.string`
/// value, an `Int` from `.int64`): returned as it is, without a ``ManagedValue``, a witness call and the
/// error wrapping per field, which were most of a field's cost (BENCHMARKS.md). `nil` for anything else, which
/// `A.unbox` then converts or reports.
///
/// Only the library's own conformances take this path (users cannot change how `String` or `Int` unbox), so
/// it reads what `A.unbox(.attribute(value))` would. Specialized for a concrete `A`, every test but the
/// value's case folds away.
@inlinable
@inline(__always)
func exactUnbox<A>(_ attribute: AttributeValue, as type: A.Type) -> A? {
    switch attribute {
    case .string(let value): return A.self == String.self ? value as? A : nil
    case .int64(let value):
        if A.self == Int64.self { return value as? A }
        if A.self == Int.self { return Int(exactly: value) as? A }
        return nil
    case .int16(let value): return A.self == Int16.self ? value as? A : nil
    case .int32(let value): return A.self == Int32.self ? value as? A : nil
    case .double(let value): return A.self == Double.self ? value as? A : nil
    case .float(let value): return A.self == Float.self ? value as? A : nil
    case .bool(let value): return A.self == Bool.self ? value as? A : nil
    case .date(let value): return A.self == Date.self ? value as? A : nil
    case .data(let value): return A.self == Data.self ? value as? A : nil
    case .decimal(let value): return A.self == Decimal.self ? value as? A : nil
    case .uuid(let value): return A.self == UUID.self ? value as? A : nil
    case .uri(let value): return A.self == URL.self ? value as? A : nil
    case .null: return nil
    }
}

@usableFromInline
func unboxSource(_ object: ManagedObject, _ key: String, _ type: Any.Type) throws -> ManagedValue? {
    if key == "objectID" {
        // An ephemeral object is never stored: a struct read from it has no objectID, and saving it inserts.
        // (An object whose context is gone keeps a permanent ID: it still names a stored row.)
        guard object.managedObjectContext != nil || !object.objectID.isTemporary else { return nil }
        // With the version the row was read at: a save through another context is checked against it.
        return .objectID(object.objectID.read(at: object.version))
    }
    // An object's values hold every attribute of its entity (nulls included) and nothing else: one lookup.
    if let position = attributePosition(object, key) {
        return nonNullAttribute(object, at: position).map { .attribute($0) }
    }
    guard let relationship = object.info.relationships[key] else {
        throw unboxError(object, key, type, "the entity has no such key")
    }
    guard !relationship.isToMany else {
        throw unboxError(object, key, type, "it is a to-many relationship; read it with <||")
    }
    guard let target = try object.related(key).first, target.unboxingDepth == 0 else { return nil }
    return .object(target)
}

@usableFromInline
func isCycle(_ object: ManagedObject, _ key: String) throws -> Bool {
    guard object.info.relationships[key] != nil else { return false }
    return try object.related(key).first.map { $0.unboxingDepth > 0 } ?? false
}

@usableFromInline
func members(_ object: ManagedObject, _ key: String, _ type: Any.Type) throws -> [ManagedObject] {
    guard let relationship = object.info.relationships[key], relationship.isToMany else {
        throw unboxError(object, key, type, "it is not a to-many relationship")
    }
    return try object.related(key).filter { $0.unboxingDepth == 0 }
}

@inlinable
func unboxWrapping<A>(_ object: ManagedObject, _ key: String, _ type: A.Type, _ body: () throws -> A) throws
    -> A
{
    do {
        return try body()
    } catch let error as NSError where error.domain == CVErrorDomain {
        throw unboxError(object, key, type, error.localizedDescription)
    }
}

@usableFromInline
func unboxError(_ object: ManagedObject, _ key: String, _ type: Any.Type, _ reason: String) -> NSError {
    NSError(unboxErrorMessage: "could not unbox '\(key)' of \(object.entity.name) as \(type): \(reason)")
}
