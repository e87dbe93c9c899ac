import Foundation

/// A function that folds one attribute's values (or a group's rows) into one value, with SQL's meaning.
///
/// Nulls are left out: ``sum``, ``average``, ``minimum`` and ``maximum`` of no non-null value are `.null`
/// (SQL's `NULL`, not zero), ``count`` counts the non-null values, and ``countRows`` counts rows whatever
/// they hold.
public enum AggregateFunction: String, Sendable, Hashable, Codable, CaseIterable {
    /// The total of a numeric attribute: `int64` for the integer types (a total that does not fit is
    /// ``CVManagedStructError/Code/aggregateOverflow``, never wrapped), `double` for `float` and `double`,
    /// `decimal` for `decimal`.
    case sum
    /// The mean of a numeric attribute: `double` for the integer and floating-point types, `decimal` for
    /// `decimal`.
    case average
    /// The least value of an ordered attribute (numbers, dates, strings and URLs in byte order), of the
    /// attribute's type.
    case minimum
    /// The greatest value of an ordered attribute, of the attribute's type.
    case maximum
    /// How many of the values are not null, as `int64`.
    case count
    /// How many rows, as `int64`; takes no key.
    case countRows
}

/// An aggregate over an entity's stored rows: one function of one attribute, over the rows a predicate
/// matches, for all of them or per group of equal values of other attributes.
///
/// ```swift
/// let perKind = try context.aggregate(
///     AggregateRequest(entityName: "Car", .average, of: "power", groupedBy: ["kind"]))
/// for row in perKind { print(row.group[0], row.value) }   // .string("coupe") .double(231.5) ...
/// ```
public struct AggregateRequest: Sendable, Hashable {
    /// The entity whose rows are aggregated.
    public var entityName: String
    /// The function.
    public var function: AggregateFunction
    /// The attribute the function folds; `nil` for ``AggregateFunction/countRows``.
    public var key: String?
    /// The rows taken, or `nil` for every row of the entity.
    public var predicate: CVPredicate?
    /// The attributes whose equal values form a group (nulls form one group, as in SQL); empty for one
    /// result over every row taken.
    public var groupBy: [String]

    /// Creates a request.
    public init(
        entityName: String, _ function: AggregateFunction, of key: String?, predicate: CVPredicate? = nil,
        groupedBy groupBy: [String] = []
    ) {
        self.entityName = entityName
        self.function = function
        self.key = key
        self.predicate = predicate
        self.groupBy = groupBy
    }

    /// The most attributes a request groups by.
    public static let maximumGroupKeys = 32

    /// The type of the function's results, once the request is checked against `entity`.
    ///
    /// - Throws: ``CVManagedStructError/unknownKey(entity:key:)`` for a key the entity has no attribute of,
    ///   ``CVManagedStructError/typeMismatch(entity:key:expected:found:)`` for a function the attribute's
    ///   type has no meaning for (a sum of strings, a minimum of booleans), and
    ///   ``CVManagedStructError/Code/invalidPredicate`` for a key given to `countRows`, none given to the
    ///   others, or more than ``maximumGroupKeys`` group keys.
    package func resultType(in entity: Entity) throws -> AttributeType {
        for name in groupBy where entity.attribute(named: name) == nil {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: name)
        }
        guard groupBy.count <= Self.maximumGroupKeys else {
            throw invalid(entity, key: groupBy[Self.maximumGroupKeys], "at most \(Self.maximumGroupKeys) group keys")
        }
        guard function != .countRows else {
            if let key { throw invalid(entity, key: key, "countRows counts rows and takes no key") }
            return .int64
        }
        guard let key else { throw invalid(entity, key: "", "\(function) needs the attribute it folds") }
        guard let attribute = entity.attribute(named: key) else {
            throw CVManagedStructError.unknownKey(entity: entity.name, key: key)
        }
        let type = attribute.type
        switch function {
        case .count, .countRows: return .int64
        case .sum:
            switch type {
            case .int16, .int32, .int64: return .int64
            case .float, .double: return .double
            case .decimal: return .decimal
            default: throw mismatch(entity, key, "a number to sum", type)
            }
        case .average:
            switch type {
            case .int16, .int32, .int64, .float, .double: return .double
            case .decimal: return .decimal
            default: throw mismatch(entity, key, "a number to average", type)
            }
        case .minimum, .maximum:
            switch type {
            case .int16, .int32, .int64, .float, .double, .decimal, .date, .string, .uri: return type
            default: throw mismatch(entity, key, "an ordered type (number, date, string or URL)", type)
            }
        }
    }

    private func invalid(_ entity: Entity, key: String, _ message: String) -> CVManagedStructError {
        CVManagedStructError.invalidPredicate(entity: entity.name, key: key, message: message)
    }

    private func mismatch(_ entity: Entity, _ key: String, _ expected: String, _ found: AttributeType)
        -> CVManagedStructError
    {
        CVManagedStructError.typeMismatch(entity: entity.name, key: key, expected: expected, found: found.rawValue)
    }
}

/// One result of an ``AggregateRequest``: a group's values (in ``AggregateRequest/groupBy``'s order; empty
/// when not grouped) and the function's value for it (`.null` when it had no non-null value to fold).
public struct AggregateRow: Sendable, Hashable {
    /// The group's values of the attributes grouped by.
    public var group: [AttributeValue]
    /// The function's value for the group.
    public var value: AttributeValue

    /// Creates a row.
    public init(group: [AttributeValue], value: AttributeValue) {
        self.group = group
        self.value = value
    }
}
