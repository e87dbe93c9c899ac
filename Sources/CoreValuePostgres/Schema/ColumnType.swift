@_spi(StoreImplementation) import CoreValue

/// The PostgreSQL column type of each attribute type.
package enum ColumnType {
    /// The type's name in DDL and casts: `smallint`, `integer`, `bigint`, `real`, `double precision`,
    /// `boolean`, `text` (for text and URLs), `bytea`, `timestamptz`, `numeric`, `uuid`.
    package static func sqlName(of type: AttributeType) -> String {
        switch type {
        case .int16: return "smallint"
        case .int32: return "integer"
        case .int64: return "bigint"
        case .float: return "real"
        case .double: return "double precision"
        case .bool: return "boolean"
        case .string: return "text"
        case .data: return "bytea"
        case .date: return "timestamptz"
        case .decimal: return "numeric"
        case .uuid: return "uuid"
        case .uri: return "text"
        }
    }

    /// Whether the type is kept in a `text` column (`COLLATE "C"`: byte order, as both stores compare it).
    package static func isText(_ type: AttributeType) -> Bool { type == .string || type == .uri }

    /// The name `information_schema.columns.data_type` reports for a DDL type name.
    static func informationSchemaName(of sqlName: String) -> String {
        switch sqlName {
        case "timestamptz": return "timestamp with time zone"
        default: return sqlName
        }
    }
}
