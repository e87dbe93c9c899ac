/// A PostgreSQL data type, identified by its OID.
///
/// The statics name the types the driver encodes and decodes; any other OID is kept as it is.
package struct PostgresType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The type's OID (`pg_type.oid`).
    package var rawValue: UInt32

    /// Wraps an OID.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// OID 0: let the server infer the parameter's type.
    package static let unspecified = PostgresType(rawValue: 0)
    /// `boolean`.
    package static let bool = PostgresType(rawValue: 16)
    /// `bytea`.
    package static let bytea = PostgresType(rawValue: 17)
    /// `"char"` (the one-byte internal type).
    package static let char = PostgresType(rawValue: 18)
    /// `name` (identifiers in the catalogs).
    package static let name = PostgresType(rawValue: 19)
    /// `bigint`.
    package static let int8 = PostgresType(rawValue: 20)
    /// `smallint`.
    package static let int2 = PostgresType(rawValue: 21)
    /// `integer`.
    package static let int4 = PostgresType(rawValue: 23)
    /// `text`.
    package static let text = PostgresType(rawValue: 25)
    /// `oid`.
    package static let oid = PostgresType(rawValue: 26)
    /// `real`.
    package static let float4 = PostgresType(rawValue: 700)
    /// `double precision`.
    package static let float8 = PostgresType(rawValue: 701)
    /// `unknown` (an untyped literal).
    package static let unknown = PostgresType(rawValue: 705)
    /// `character` (blank-padded).
    package static let bpchar = PostgresType(rawValue: 1042)
    /// `character varying`.
    package static let varchar = PostgresType(rawValue: 1043)
    /// `timestamp with time zone`.
    package static let timestamptz = PostgresType(rawValue: 1184)
    /// `numeric`.
    package static let numeric = PostgresType(rawValue: 1700)
    /// `uuid`.
    package static let uuid = PostgresType(rawValue: 2950)
    /// `void` (the result of functions such as `pg_notify`).
    package static let void = PostgresType(rawValue: 2278)
    /// `boolean[]`.
    package static let boolArray = PostgresType(rawValue: 1000)
    /// `bytea[]`.
    package static let byteaArray = PostgresType(rawValue: 1001)
    /// `smallint[]`.
    package static let int2Array = PostgresType(rawValue: 1005)
    /// `integer[]`.
    package static let int4Array = PostgresType(rawValue: 1007)
    /// `text[]`.
    package static let textArray = PostgresType(rawValue: 1009)
    /// `character varying[]`.
    package static let varcharArray = PostgresType(rawValue: 1015)
    /// `bigint[]`.
    package static let int8Array = PostgresType(rawValue: 1016)
    /// `real[]`.
    package static let float4Array = PostgresType(rawValue: 1021)
    /// `double precision[]`.
    package static let float8Array = PostgresType(rawValue: 1022)
    /// `timestamp with time zone[]`.
    package static let timestamptzArray = PostgresType(rawValue: 1185)
    /// `numeric[]`.
    package static let numericArray = PostgresType(rawValue: 1231)
    /// `uuid[]`.
    package static let uuidArray = PostgresType(rawValue: 2951)

    private static let names: [UInt32: String] = [
        0: "unspecified", 16: "boolean", 17: "bytea", 18: "\"char\"", 19: "name", 20: "bigint", 21: "smallint",
        23: "integer", 25: "text", 26: "oid", 700: "real", 701: "double precision", 705: "unknown",
        1042: "character", 1043: "character varying", 1184: "timestamp with time zone", 1700: "numeric",
        2950: "uuid", 2278: "void",
    ]

    /// Element type to array type, for the types the driver knows.
    private static let arrays: [UInt32: UInt32] = [
        16: 1000, 17: 1001, 21: 1005, 23: 1007, 25: 1009, 1043: 1015, 20: 1016, 700: 1021, 701: 1022,
        1184: 1185, 1700: 1231, 2950: 2951,
    ]

    private static let elements: [UInt32: UInt32] = Dictionary(
        uniqueKeysWithValues: arrays.map { ($0.value, $0.key) })

    /// The 1-D array type whose elements are this type (`integer` -> `integer[]`); `nil` if unknown.
    package var arrayType: PostgresType? { Self.arrays[rawValue].map(PostgresType.init(rawValue:)) }

    /// The element type when this is a known array type (`integer[]` -> `integer`); `nil` otherwise.
    package var elementType: PostgresType? { Self.elements[rawValue].map(PostgresType.init(rawValue:)) }

    /// The SQL name, e.g. `bigint`, `text[]`, or `oid 1234` for a type the driver does not know.
    package var description: String {
        if let name = Self.names[rawValue] { return name }
        if let element = elementType, let name = Self.names[element.rawValue] { return name + "[]" }
        return "oid \(rawValue)"
    }
}
