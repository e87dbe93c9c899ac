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
        case .uri: return .text
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
        case .uri(let url): return try PostgresValue(url.absoluteString)
        }
    }

    private static func array(_ values: [AttributeValue], _ type: AttributeType) throws -> PostgresValue {
        try ArrayEncoding.encode(values, as: type)
    }

    /// A cell as an attribute value, decoded straight from libpq's bytes (one call each for NULL, length and
    /// bytes). `serverType` is the column's, looked up once per column by a caller reading many rows.
    ///
    /// This repeats what `QueryResult.decodeIfPresent` does on purpose: that method is generic in another
    /// module, so every call would run unspecialized (fetch_by_ids's `fetch_s` 56 → 67 ms when tried); here
    /// each type's decode is specialized.
    ///
    /// - Throws: The driver's `.decoding` error naming the column, its server type, the row and the Swift type,
    ///   for a cell outside the result or one that does not hold `type`.
    static func attributeValue(
        _ result: QueryResult, row: Int, column: Int, type: AttributeType, serverType: PostgresType? = nil
    ) throws -> AttributeValue {
        guard result.contains(row: row, column: column) else { throw result.outOfRange(row: row, column: column) }
        return try attributeValue(inRange: result, row: row, column: column, type: type, serverType: serverType)
    }

    /// ``attributeValue(_:row:column:type:serverType:)`` for a cell the caller has checked is inside the
    /// result (the row reader checks a row's columns once, not each cell).
    static func attributeValue(
        inRange result: QueryResult, row: Int, column: Int, type: AttributeType, serverType: PostgresType? = nil
    ) throws -> AttributeValue {
        guard let bytes = result.unsafeBytes(row: Int32(row), column: Int32(column)) else { return .null }
        do {
            return try attributeValue(bytes, type: type, serverType: serverType ?? result.columnTypes[column])
        } catch let error as LibPQError {
            throw result.decodingFailure(error, row: row, column: column, asTypeNamed: swiftTypeName(of: type))
        }
    }

    /// A non-NULL cell's bytes as a value of `type`, read as the server type `serverType` (`nil`: the
    /// column type of `type`, as in a binary COPY whose columns were cast to it). Each type's decode is
    /// specialized here.
    ///
    /// - Throws: The driver's `.decoding` error for bytes that do not hold `type`.
    static func attributeValue(_ bytes: UnsafeRawBufferPointer, type: AttributeType, serverType: PostgresType?)
        throws -> AttributeValue
    {
        func decoded<T: PostgresDecodable & PostgresEncodable>(_: T.Type, _ wrap: (T) -> AttributeValue) throws
            -> AttributeValue
        {
            wrap(try T.decode(from: bytes, type: serverType ?? T.postgresType))
        }
        switch type {
        case .int16: return try decoded(Int16.self, AttributeValue.int16)
        case .int32: return try decoded(Int32.self, AttributeValue.int32)
        case .int64: return try decoded(Int64.self, AttributeValue.int64)
        case .float: return try decoded(Float.self, AttributeValue.float)
        case .double: return try decoded(Double.self, AttributeValue.double)
        case .bool: return try decoded(Bool.self, AttributeValue.bool)
        case .string: return try decoded(String.self, AttributeValue.string)
        case .data: return try decoded(Data.self, AttributeValue.data)
        case .date: return try decoded(Date.self, AttributeValue.date)
        case .decimal: return try decoded(Decimal.self, AttributeValue.decimal)
        case .uuid: return try decoded(UUID.self, AttributeValue.uuid)
        case .uri:
            // Text that another writer (psql, say) stored and that is no URL is a decoding error, not a guess.
            let text = try String.decode(from: bytes, type: serverType ?? String.postgresType)
            guard let url = URL(string: text) else { throw LibPQError(.decoding, "the text is not a URL") }
            return .uri(url)
        }
    }

    /// The Swift type a value of `type` is decoded as, for error messages.
    static func swiftTypeName(of type: AttributeType) -> String {
        switch type {
        case .int16: return "Int16"
        case .int32: return "Int32"
        case .int64: return "Int64"
        case .float: return "Float"
        case .double: return "Double"
        case .bool: return "Bool"
        case .string: return "String"
        case .data: return "Data"
        case .date: return "Date"
        case .decimal: return "Decimal"
        case .uuid: return "UUID"
        case .uri: return "URL"
        }
    }

    /// A non-NULL `int8` cell (a surrogate key, a version), through the decoder specialized here: the
    /// generic `QueryResult.decode` is in another module and runs unspecialized, several times the cost, and
    /// the store reads two such cells per row it writes or fetches.
    ///
    /// - Throws: The driver's decoding error for a cell out of range or not an integer; `.decoding` for NULL.
    static func int64(_ result: QueryResult, row: Int, column: Int) throws -> Int64 {
        guard case .int64(let number) = try attributeValue(result, row: row, column: column, type: .int64) else {
            throw LibPQError(.decoding, "column \(column) row \(row) is NULL, expected a key or version")
        }
        return number
    }
}
