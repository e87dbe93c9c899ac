@_spi(StoreImplementation) import CoreValue

/// One bound parameter of a ``SQL`` statement, independent of the driver.
///
/// Binds stay plain attribute values until a statement is executed, so SQL generation is pure code whose
/// text and parameters can be compared in tests. The store converts them to the driver's wire values just
/// before sending.
package enum SQLBind: Sendable, Hashable {
    /// One value of a column type; `.null` binds a typed SQL `NULL`.
    case scalar(AttributeType, AttributeValue)
    /// A one-dimensional array of a column type (`= ANY($1)`, `unnest($1::text[])`); elements may be null.
    case array(AttributeType, [AttributeValue])

    /// A `bigint` value.
    package static func int64(_ value: Int64) -> SQLBind { .scalar(.int64, .int64(value)) }

    /// A `text` value.
    package static func text(_ value: String) -> SQLBind { .scalar(.string, .string(value)) }

    /// A `bigint[]` array.
    package static func int64Array(_ values: [Int64]) -> SQLBind { .array(.int64, values.map { .int64($0) }) }

    /// A nullable `bigint[]` array (`nil` elements are SQL `NULL`).
    package static func optionalInt64Array(_ values: [Int64?]) -> SQLBind {
        .array(.int64, values.map { $0.map(AttributeValue.int64) ?? .null })
    }

    /// A `boolean[]` array.
    package static func boolArray(_ values: [Bool]) -> SQLBind { .array(.bool, values.map { .bool($0) }) }

    /// The PostgreSQL type name of the bind, as used in casts (`bigint`, `text[]`).
    package var typeName: String {
        switch self {
        case .scalar(let type, _): return ColumnType.sqlName(of: type)
        case .array(let type, _): return ColumnType.sqlName(of: type) + "[]"
        }
    }
}
