/// The error thrown by boxing, by contexts and by stores when a value, a key, an entity or a save is wrong.
///
/// A struct with a ``Code`` (the postgres-nio pattern), so that new kinds of error can be added without
/// breaking anyone's exhaustive `switch`. The fields name exactly what was wrong: ``entity``, ``key``, the
/// type ``expected`` and the one ``found``, and a ``message``. Each kind is also a static member of this
/// type, so code written against the original CoreValue's cases still reads the same:
///
/// ```swift
/// throw CVManagedStructError.structConversionError(message: "not a struct")   // make one
///
/// do { try person.save(context) }
/// catch CVManagedStructError.conflict { reload() }                             // match a kind
/// catch let error as CVManagedStructError where error.code == .missingValue {  // or read its fields
///     print(error.entity ?? "", error.key ?? "")
/// }
/// ```
public struct CVManagedStructError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of error.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The kind's name, as in `.conflict`.
        public let rawValue: String

        /// A code by name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The kind's name.
        public var description: String { rawValue }

        /// Whether `error` is a ``CVManagedStructError`` of this kind: `catch CVManagedStructError.conflict`.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? CVManagedStructError)?.code == code
        }

        /// The value being boxed is not a struct.
        public static let structConversionError = Code(rawValue: "structConversionError")
        /// A property's value cannot be boxed.
        public static let structValueError = Code(rawValue: "structValueError")
        /// An update failed, for example because the struct's `objectID` names no stored object.
        public static let structUpdateError = Code(rawValue: "structUpdateError")
        /// A delete failed.
        public static let structDeleteError = Code(rawValue: "structDeleteError")
        /// The model is invalid: a duplicate name, an unknown destination, an inverse mismatch.
        public static let invalidModel = Code(rawValue: "invalidModel")
        /// No entity of this name is in the model.
        public static let unknownEntity = Code(rawValue: "unknownEntity")
        /// An object of an abstract entity was to be inserted: only its subentities have objects.
        public static let abstractEntity = Code(rawValue: "abstractEntity")
        /// The entity has no attribute or relationship of this name.
        public static let unknownKey = Code(rawValue: "unknownKey")
        /// A value of the wrong type was given for a key.
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// A required attribute has no value.
        public static let missingValue = Code(rawValue: "missingValue")
        /// Another context or process changed or deleted the object since it was read (optimistic
        /// locking).
        public static let conflict = Code(rawValue: "conflict")
        /// No stored object has this ID.
        public static let objectNotFound = Code(rawValue: "objectNotFound")
        /// The object was deleted, or belongs to no context that can save it.
        public static let invalidObject = Code(rawValue: "invalidObject")
        /// A save or delete would break a rule of the model: a duplicate unique value, a link to a
        /// missing object, or a relationship whose delete rule is `deny` that still has objects.
        public static let constraintViolation = Code(rawValue: "constraintViolation")
        /// A predicate cannot be evaluated as given, e.g. a `LIKE` pattern ending in an unescaped
        /// `\`.
        public static let invalidPredicate = Code(rawValue: "invalidPredicate")
        /// A relationship of an object that can no longer load it: the context the object was
        /// fetched into was released, so its links are gone. Reading it as empty would lose the
        /// links on the next save; keep the context alive while you read the object, or fetch it
        /// again in a live context.
        public static let relationshipUnavailable = Code(rawValue: "relationshipUnavailable")
        /// Input nests deeper than the library walks: a predicate's `and`/`or`/`not`, or a graph of
        /// nested structs and objects. `limit` is the deepest nesting accepted
        /// (``CVPredicate/maximumDepth``, ``ManagedObjectContext/maximumGraphDepth``).
        public static let nestingTooDeep = Code(rawValue: "nestingTooDeep")
        /// A predicate has more terms than ``CVPredicate/maximumTerms``: `found` says how many, `limit` how
        /// many are accepted. A list of values is one term with `in(_:)`.
        public static let predicateTooLarge = Code(rawValue: "predicateTooLarge")
        /// A Foundation `Predicate` or `SortDescriptor` the library cannot translate to a store query: an
        /// expression it has no SQL for (arithmetic, a computed property, a comparison of two attributes,
        /// ...). `what` names the expression; it is thrown before anything is sent.
        public static let unsupportedPredicate = Code(rawValue: "unsupportedPredicate")
        /// An aggregate's result does not fit its type: an integer sum beyond `Int64`. Never wrapped.
        public static let aggregateOverflow = Code(rawValue: "aggregateOverflow")
        /// History after a token was asked for, and some of it has been deleted
        /// (``HistoryStore/deleteHistory(before:)``): the reader must reload what it derives from the rows.
        public static let historyExpired = Code(rawValue: "historyExpired")
        /// A history token of another store's history (another database or schema), or history asked of a
        /// store that does not record it.
        public static let historyUnavailable = Code(rawValue: "historyUnavailable")
    }

    /// The kind of error.
    public var code: Code
    /// The entity at fault, when there is one.
    public var entity: String?
    /// The attribute or relationship at fault, when there is one.
    public var key: String?
    /// What went wrong, in words, for the kinds that carry a message.
    public var message: String?
    /// For ``Code/typeMismatch``: the type the key needs.
    public var expected: String?
    /// For ``Code/typeMismatch``: the type that was given; for ``Code/predicateTooLarge``: how many terms.
    public var found: String?
    /// For ``Code/objectNotFound``: the ID that names no stored object.
    public var objectID: ManagedObjectID?
    /// For ``Code/nestingTooDeep``: what nests too deep ("a predicate", "a graph of nested structs").
    public var what: String?
    /// For ``Code/nestingTooDeep``: the deepest nesting accepted; for ``Code/predicateTooLarge``: the most
    /// terms accepted.
    public var limit: Int?

    /// An error of a kind, with the fields that kind has.
    public init(
        _ code: Code, entity: String? = nil, key: String? = nil, message: String? = nil, expected: String? = nil,
        found: String? = nil, objectID: ManagedObjectID? = nil, what: String? = nil, limit: Int? = nil
    ) {
        self.code = code
        self.entity = entity
        self.key = key
        self.message = message
        self.expected = expected
        self.found = found
        self.objectID = objectID
        self.what = what
        self.limit = limit
    }

    /// The code of structConversionError(...), for matching: `catch CVManagedStructError.structConversionError`.
    public static let structConversionError = Code.structConversionError

    /// The value being boxed is not a struct.
    public static func structConversionError(message: String) -> CVManagedStructError {
        CVManagedStructError(.structConversionError, message: message)
    }

    /// The code of structValueError(...), for matching: `catch CVManagedStructError.structValueError`.
    public static let structValueError = Code.structValueError

    /// A property's value cannot be boxed.
    public static func structValueError(message: String) -> CVManagedStructError {
        CVManagedStructError(.structValueError, message: message)
    }

    /// The code of structUpdateError(...), for matching: `catch CVManagedStructError.structUpdateError`.
    public static let structUpdateError = Code.structUpdateError

    /// An update failed, for example because the struct's `objectID` names no stored object.
    public static func structUpdateError(message: String) -> CVManagedStructError {
        CVManagedStructError(.structUpdateError, message: message)
    }

    /// The code of structDeleteError(...), for matching: `catch CVManagedStructError.structDeleteError`.
    public static let structDeleteError = Code.structDeleteError

    /// A delete failed.
    public static func structDeleteError(message: String) -> CVManagedStructError {
        CVManagedStructError(.structDeleteError, message: message)
    }

    /// The code of invalidModel(...), for matching: `catch CVManagedStructError.invalidModel`.
    public static let invalidModel = Code.invalidModel

    /// The model is invalid: a duplicate name, an unknown destination, an inverse mismatch.
    public static func invalidModel(entity: String, key: String?, message: String) -> CVManagedStructError {
        CVManagedStructError(.invalidModel, entity: entity, key: key, message: message)
    }

    /// The code of unknownEntity(...), for matching: `catch CVManagedStructError.unknownEntity`.
    public static let unknownEntity = Code.unknownEntity

    /// No entity of this name is in the model.
    public static func unknownEntity(_ entity: String) -> CVManagedStructError {
        CVManagedStructError(.unknownEntity, entity: entity)
    }

    /// The code of abstractEntity(...), for matching: `catch CVManagedStructError.abstractEntity`.
    public static let abstractEntity = Code.abstractEntity

    /// An object of an abstract entity was to be inserted: only its subentities have objects.
    public static func abstractEntity(_ entity: String) -> CVManagedStructError {
        CVManagedStructError(
            .abstractEntity, entity: entity, message: "'\(entity)' is abstract: insert one of its subentities")
    }

    /// The code of unknownKey(...), for matching: `catch CVManagedStructError.unknownKey`.
    public static let unknownKey = Code.unknownKey

    /// The entity has no attribute or relationship of this name.
    public static func unknownKey(entity: String, key: String) -> CVManagedStructError {
        CVManagedStructError(.unknownKey, entity: entity, key: key)
    }

    /// The code of typeMismatch(...), for matching: `catch CVManagedStructError.typeMismatch`.
    public static let typeMismatch = Code.typeMismatch

    /// A value of the wrong type was given for a key.
    public static func typeMismatch(entity: String, key: String, expected: String, found: String)
        -> CVManagedStructError
    {
        CVManagedStructError(.typeMismatch, entity: entity, key: key, expected: expected, found: found)
    }

    /// The code of missingValue(...), for matching: `catch CVManagedStructError.missingValue`.
    public static let missingValue = Code.missingValue

    /// A required attribute has no value.
    public static func missingValue(entity: String, key: String) -> CVManagedStructError {
        CVManagedStructError(.missingValue, entity: entity, key: key)
    }

    /// The code of conflict(...), for matching: `catch CVManagedStructError.conflict`.
    public static let conflict = Code.conflict

    /// Another context or process changed or deleted the object since it was read (optimistic locking).
    public static func conflict(entity: String, message: String) -> CVManagedStructError {
        CVManagedStructError(.conflict, entity: entity, message: message)
    }

    /// The code of objectNotFound(...), for matching: `catch CVManagedStructError.objectNotFound`.
    public static let objectNotFound = Code.objectNotFound

    /// No stored object has this ID.
    public static func objectNotFound(_ objectID: ManagedObjectID) -> CVManagedStructError {
        CVManagedStructError(.objectNotFound, objectID: objectID)
    }

    /// The code of invalidObject(...), for matching: `catch CVManagedStructError.invalidObject`.
    public static let invalidObject = Code.invalidObject

    /// The object was deleted, or belongs to no context that can save it.
    public static func invalidObject(message: String) -> CVManagedStructError {
        CVManagedStructError(.invalidObject, message: message)
    }

    /// The code of constraintViolation(...), for matching: `catch CVManagedStructError.constraintViolation`.
    public static let constraintViolation = Code.constraintViolation

    /// A save or delete would break a rule of the model: a duplicate unique value, a link to a missing
    /// object, or a relationship whose delete rule is `deny` that still has objects.
    public static func constraintViolation(entity: String, key: String?, message: String) -> CVManagedStructError {
        CVManagedStructError(.constraintViolation, entity: entity, key: key, message: message)
    }

    /// The code of invalidPredicate(...), for matching: `catch CVManagedStructError.invalidPredicate`.
    public static let invalidPredicate = Code.invalidPredicate
    /// The code of unsupportedPredicate(...), for matching: `catch CVManagedStructError.unsupportedPredicate`.
    public static let unsupportedPredicate = Code.unsupportedPredicate

    /// A predicate cannot be evaluated as given, e.g. a `LIKE` pattern ending in an unescaped `\`.
    public static func invalidPredicate(entity: String, key: String, message: String) -> CVManagedStructError {
        CVManagedStructError(.invalidPredicate, entity: entity, key: key, message: message)
    }

    /// The code of relationshipUnavailable(...), for matching: `catch CVManagedStructError.relationshipUnavailable`.
    public static let relationshipUnavailable = Code.relationshipUnavailable

    /// A relationship of an object that can no longer load it: the context the object was fetched into
    /// was released, so its links are gone. Reading it as empty would lose the links on the next save;
    /// keep the context alive while you read the object, or fetch it again in a live context.
    public static func relationshipUnavailable(entity: String, key: String) -> CVManagedStructError {
        CVManagedStructError(.relationshipUnavailable, entity: entity, key: key)
    }

    /// The code of nestingTooDeep(...), for matching: `catch CVManagedStructError.nestingTooDeep`.
    public static let nestingTooDeep = Code.nestingTooDeep

    /// Input nests deeper than the library walks: a predicate's `and`/`or`/`not`, or a graph of nested
    /// structs and objects. `limit` is the deepest nesting accepted (``CVPredicate/maximumDepth``,
    /// ``ManagedObjectContext/maximumGraphDepth``).
    public static func nestingTooDeep(entity: String, what: String, limit: Int) -> CVManagedStructError {
        CVManagedStructError(.nestingTooDeep, entity: entity, what: what, limit: limit)
    }

    /// The code of predicateTooLarge(...), for matching: `catch CVManagedStructError.predicateTooLarge`.
    public static let predicateTooLarge = Code.predicateTooLarge

    /// A predicate on `entity` with `terms` terms, more than `limit` (``CVPredicate/maximumTerms``).
    public static func predicateTooLarge(entity: String, terms: Int, limit: Int) -> CVManagedStructError {
        CVManagedStructError(.predicateTooLarge, entity: entity, found: "\(terms) terms", limit: limit)
    }

    /// A Foundation `Predicate` or `SortDescriptor` of `entity` with an expression that has no translation.
    public static func unsupportedPredicate(entity: String, what: String, message: String) -> CVManagedStructError {
        CVManagedStructError(.unsupportedPredicate, entity: entity, message: message, what: what)
    }

    /// The code of aggregateOverflow(...), for matching: `catch CVManagedStructError.aggregateOverflow`.
    public static let aggregateOverflow = Code.aggregateOverflow

    /// The `function` of `entity.key` does not fit its result type (an integer sum beyond `Int64`).
    public static func aggregateOverflow(entity: String, key: String, function: String) -> CVManagedStructError {
        CVManagedStructError(
            .aggregateOverflow, entity: entity, key: key, message: "the \(function) does not fit in Int64")
    }

    /// The code of historyExpired(...), for matching: `catch CVManagedStructError.historyExpired`.
    public static let historyExpired = Code.historyExpired

    /// Some history after `token` was deleted: reading on from it would skip transactions.
    public static func historyExpired(_ token: String) -> CVManagedStructError {
        CVManagedStructError(
            .historyExpired,
            message: "history after \(token) was partly deleted; reload what you derive from the rows and read on "
                + "from a new token")
    }

    /// The code of historyUnavailable(...), for matching: `catch CVManagedStructError.historyUnavailable`.
    public static let historyUnavailable = Code.historyUnavailable

    /// History cannot be read or recorded here, for the reason `message` gives.
    public static func historyUnavailable(_ message: String) -> CVManagedStructError {
        CVManagedStructError(.historyUnavailable, message: message)
    }

    /// A readable description naming what was wrong.
    public var description: String {
        let entity = self.entity ?? "", key = self.key ?? "", message = self.message ?? ""
        switch code {
        case .structConversionError: return "struct conversion error: \(message)"
        case .structValueError: return "struct value error: \(message)"
        case .structUpdateError: return "struct update error: \(message)"
        case .structDeleteError: return "struct delete error: \(message)"
        case .invalidModel:
            return "invalid model: entity '\(entity)'\(self.key.map { " key '\($0)'" } ?? ""): \(message)"
        case .unknownEntity: return "unknown entity '\(entity)'"
        case .abstractEntity: return "abstract entity '\(entity)': \(message)"
        case .unknownKey: return "entity '\(entity)' has no key '\(key)'"
        case .typeMismatch:
            return "type mismatch for '\(entity).\(key)': expected \(expected ?? "?"), found \(found ?? "?")"
        case .missingValue: return "missing value for required '\(entity).\(key)'"
        case .conflict: return "conflict on '\(entity)': \(message)"
        case .objectNotFound: return "object not found: \(objectID.map { "\($0)" } ?? "?")"
        case .invalidObject: return "invalid object: \(message)"
        case .constraintViolation:
            return "constraint violation on '\(entity)\(self.key.map { ".\($0)" } ?? "")': \(message)"
        case .invalidPredicate: return "invalid predicate on '\(entity).\(key)': \(message)"
        case .relationshipUnavailable:
            return "relationship '\(entity).\(key)' cannot be read: the object's context was released, so its "
                + "links are no longer loaded; keep the context alive while reading, or fetch the object again"
        case .nestingTooDeep:
            return "\(what ?? "input") of '\(entity)' nests deeper than \(limit ?? 0) levels, the most that is accepted"
        case .predicateTooLarge:
            return "a predicate of '\(entity)' has \(found ?? "too many terms"); at most \(limit ?? 0) are accepted "
                + "(a list of values is one term with in(_:))"
        case .historyExpired: return "history expired: \(message)"
        case .historyUnavailable: return "history unavailable: \(message)"
        case .aggregateOverflow: return "aggregate of '\(entity).\(key)' overflows: \(message)"
        case .unsupportedPredicate:
            return "predicate on '\(entity)' cannot be translated: \(what ?? "an expression"): \(message)"
        default:
            return "\(code)\(self.entity.map { " on '\($0)'" } ?? ""): \(message)"
        }
    }
}
