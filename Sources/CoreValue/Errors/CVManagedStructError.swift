/// The error thrown by boxing, by contexts and by stores when a value, a key, an entity or a save is wrong.
///
/// The first four cases are the original CoreValue's and keep their names, so existing `catch` clauses still
/// match. The others name exactly what was wrong: the entity, the key, the type expected and the one found.
public enum CVManagedStructError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value being boxed is not a struct.
    case structConversionError(message: String)
    /// A property's value cannot be boxed.
    case structValueError(message: String)
    /// An update failed, for example because the struct's `objectID` names no stored object.
    case structUpdateError(message: String)
    /// A delete failed.
    case structDeleteError(message: String)
    /// The model is invalid: a duplicate name, an unknown destination, an inverse mismatch.
    case invalidModel(entity: String, key: String?, message: String)
    /// No entity of this name is in the model.
    case unknownEntity(String)
    /// The entity has no attribute or relationship of this name.
    case unknownKey(entity: String, key: String)
    /// A value of the wrong type was given for a key.
    case typeMismatch(entity: String, key: String, expected: String, found: String)
    /// A required attribute has no value.
    case missingValue(entity: String, key: String)
    /// Another context or process changed or deleted the object since it was read (optimistic locking).
    case conflict(entity: String, message: String)
    /// No stored object has this ID.
    case objectNotFound(ManagedObjectID)
    /// The object was deleted, or belongs to no context that can save it.
    case invalidObject(message: String)
    /// A save or delete would break a rule of the model: a duplicate unique value, a link to a missing
    /// object, or a relationship whose delete rule is `deny` that still has objects.
    case constraintViolation(entity: String, key: String?, message: String)
    /// A predicate cannot be evaluated as given, e.g. a `LIKE` pattern ending in an unescaped `\`.
    case invalidPredicate(entity: String, key: String, message: String)
    /// A relationship of an object that can no longer load it: the context the object was fetched into was
    /// released, so its links are gone. Reading it as empty would lose the links on the next save; keep the
    /// context alive while you read the object, or fetch it again in a live context.
    case relationshipUnavailable(entity: String, key: String)
    /// Input nests deeper than the library walks: a predicate's `and`/`or`/`not`, or a graph of nested
    /// structs and objects. `limit` is the deepest nesting accepted (``CVPredicate/maximumDepth``,
    /// ``ManagedObjectContext/maximumGraphDepth``).
    case nestingTooDeep(entity: String, what: String, limit: Int)

    /// A readable description naming what was wrong.
    public var description: String {
        switch self {
        case .structConversionError(let message): return "struct conversion error: \(message)"
        case .structValueError(let message): return "struct value error: \(message)"
        case .structUpdateError(let message): return "struct update error: \(message)"
        case .structDeleteError(let message): return "struct delete error: \(message)"
        case .invalidModel(let entity, let key, let message):
            return "invalid model: entity '\(entity)'\(key.map { " key '\($0)'" } ?? ""): \(message)"
        case .unknownEntity(let name): return "unknown entity '\(name)'"
        case .unknownKey(let entity, let key): return "entity '\(entity)' has no key '\(key)'"
        case .typeMismatch(let entity, let key, let expected, let found):
            return "type mismatch for '\(entity).\(key)': expected \(expected), found \(found)"
        case .missingValue(let entity, let key): return "missing value for required '\(entity).\(key)'"
        case .conflict(let entity, let message): return "conflict on '\(entity)': \(message)"
        case .objectNotFound(let id): return "object not found: \(id)"
        case .invalidObject(let message): return "invalid object: \(message)"
        case .constraintViolation(let entity, let key, let message):
            return "constraint violation on '\(entity)\(key.map { ".\($0)" } ?? "")': \(message)"
        case .invalidPredicate(let entity, let key, let message):
            return "invalid predicate on '\(entity).\(key)': \(message)"
        case .relationshipUnavailable(let entity, let key):
            return "relationship '\(entity).\(key)' cannot be read: the object's context was released, so its "
                + "links are no longer loaded; keep the context alive while reading, or fetch the object again"
        case .nestingTooDeep(let entity, let what, let limit):
            return "\(what) of '\(entity)' nests deeper than \(limit) levels, the most that is accepted"
        }
    }
}
