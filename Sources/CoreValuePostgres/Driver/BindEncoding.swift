@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

/// Converts driver-independent binds to the driver's wire values, at execution time only.
enum BindEncoding {
    /// The wire type of a column type.
    static func postgresType(of type: AttributeType) -> PostgresType {
        switch type {
        case .int16: return .int2
        case .int32: return .int4
        case .int64: return .int8
        case .float: return .float4
        case .double: return .float8
        case .bool: return .bool
        case .string: return .text
        case .data: return .bytea
        case .date: return .timestamptz
        case .decimal: return .numeric
        case .uuid: return .uuid
        }
    }

    /// The wire value of a bind.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidValue`` when an element does not have the bind's type;
    ///   the driver's encoding error otherwise.
    static func postgresValue(_ bind: SQLBind) throws -> PostgresValue {
        switch bind {
        case .scalar(let type, let value): return try scalar(value, type)
        case .array(let type, let values): return try array(values, type)
        }
    }

    private static func scalar(_ value: AttributeValue, _ type: AttributeType) throws -> PostgresValue {
        switch value {
        case .null: return .null(postgresType(of: type))
        case .int16(let number): return try PostgresValue(number)
        case .int32(let number): return try PostgresValue(number)
        case .int64(let number): return try PostgresValue(number)
        case .float(let number): return try PostgresValue(number)
        case .double(let number): return try PostgresValue(number)
        case .bool(let flag): return try PostgresValue(flag)
        case .string(let text): return try PostgresValue(text)
        case .data(let bytes): return try PostgresValue(bytes)
        case .date(let date): return try PostgresValue(date)
        case .decimal(let number): return try PostgresValue(number)
        case .uuid(let uuid): return try PostgresValue(uuid)
        }
    }

    private static func array(_ values: [AttributeValue], _ type: AttributeType) throws -> PostgresValue {
        try ArrayEncoding.encode(values, as: type)
    }

    /// Reads one result cell as an attribute value of a column type (`.null` for SQL NULL).
    ///
    /// - Throws: The driver's decoding error when the cell does not hold that type.
    /// A cell as an attribute value, decoded straight from libpq's bytes with the column's server type
    /// (`serverType`, looked up once per column by the caller); any decoding failure is reported by
    /// ``attributeValue(_:row:column:type:)``, with the column's name in the message.
    static func fastAttributeValue(
        _ result: QueryResult, row: Int, column: Int, type: AttributeType, serverType: PostgresType
    ) throws -> AttributeValue {
        guard row < result.rowCount, column < result.columnCount else {
            return try attributeValue(result, row: row, column: column, type: type)
        }
        guard let bytes = result.unsafeBytes(row: Int32(row), column: Int32(column)) else { return .null }
        do {
            switch type {
            case .int16: return .int16(try Int16.decode(from: bytes, type: serverType))
            case .int32: return .int32(try Int32.decode(from: bytes, type: serverType))
            case .int64: return .int64(try Int64.decode(from: bytes, type: serverType))
            case .float: return .float(try Float.decode(from: bytes, type: serverType))
            case .double: return .double(try Double.decode(from: bytes, type: serverType))
            case .bool: return .bool(try Bool.decode(from: bytes, type: serverType))
            case .string: return .string(try String.decode(from: bytes, type: serverType))
            case .data: return .data(try Data.decode(from: bytes, type: serverType))
            case .date: return .date(try Date.decode(from: bytes, type: serverType))
            case .decimal: return .decimal(try Decimal.decode(from: bytes, type: serverType))
            case .uuid: return .uuid(try UUID.decode(from: bytes, type: serverType))
            }
        } catch {
            // The checked path again, for its error naming the column, type and row.
            return try attributeValue(result, row: row, column: column, type: type)
        }
    }

    static func attributeValue(_ result: QueryResult, row: Int, column: Int, type: AttributeType) throws
        -> AttributeValue
    {
        if result.isNull(row: row, column: column) { return .null }
        switch type {
        case .int16: return .int16(try result.decode(Int16.self, row: row, column: column))
        case .int32: return .int32(try result.decode(Int32.self, row: row, column: column))
        case .int64: return .int64(try result.decode(Int64.self, row: row, column: column))
        case .float: return .float(try result.decode(Float.self, row: row, column: column))
        case .double: return .double(try result.decode(Double.self, row: row, column: column))
        case .bool: return .bool(try result.decode(Bool.self, row: row, column: column))
        case .string: return .string(try result.decode(String.self, row: row, column: column))
        case .data: return .data(try result.decode(Data.self, row: row, column: column))
        case .date: return .date(try result.decode(Date.self, row: row, column: column))
        case .decimal: return .decimal(try result.decode(Decimal.self, row: row, column: column))
        case .uuid: return .uuid(try result.decode(UUID.self, row: row, column: column))
        }
    }
}
