import Foundation

/// The storage type of an entity attribute.
///
/// Each case maps to one PostgreSQL column type (see `PostgresStore`) and to the Swift types that box into it:
/// `Int` and `Int64` box into ``int64``, `NSDecimalNumber` and `Decimal` into ``decimal``, an enum with a raw
/// value into the type of its raw value.
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    /// A 16-bit signed integer (`smallint`).
    case int16
    /// A 32-bit signed integer (`integer`).
    case int32
    /// A 64-bit signed integer (`bigint`); Swift's `Int` on 64-bit platforms.
    case int64
    /// A double-precision float (`double precision`).
    case double
    /// A single-precision float (`real`).
    case float
    /// A Boolean (`boolean`).
    case bool
    /// Unicode text (`text`).
    case string
    /// Raw bytes (`bytea`).
    case data
    /// A point in time with microsecond precision (`timestamptz`).
    case date
    /// An arbitrary-precision decimal number (`numeric`).
    case decimal
    /// A UUID (`uuid`).
    case uuid
    /// A URL, as Core Data's URI attribute type keeps it: its absolute string (`text`). Swift's `URL` boxes
    /// into it.
    case uri
}
