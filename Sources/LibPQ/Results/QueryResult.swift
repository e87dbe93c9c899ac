import CLibPQ
import Foundation

/// The finished result of one statement: rows of binary cells, immutable.
///
/// Read cells with ``decode(_:row:column:)``:
/// ```swift
/// let result = try connection.query("select id, name from person")
/// for row in 0..<result.rowCount {
///     let id = try result.decode(Int64.self, row: row, column: 0)
///     let name = try result.decodeIfPresent(String.self, row: row, column: 1)
/// }
/// ```
/// Row and column indexes must be in range (`0..<rowCount`, `0..<columnCount`); an index out of range
/// reads as NULL rather than crashing.
package final class QueryResult: @unchecked Sendable {
    // @unchecked: the PGresult is owned exclusively by this object, never mutated after init (libpq's
    // accessors only read it), and freed in deinit; all stored properties are `let`.
    private let result: OpaquePointer

    /// The number of rows.
    package let rowCount: Int
    /// The number of columns.
    package let columnCount: Int
    /// The columns' server types in order, for decoders that read many cells in a loop.
    package let columnTypes: [PostgresType]
    /// The command tag of a result made in memory or read row by row; `nil`: libpq's.
    private let givenTag: String?

    /// The result's columns in order. Read from libpq on each call: a request's read never asks for the
    /// names, and building them for every result cost a string per column.
    package var columns: [Column] { QueryResult.columns(of: result) }

    /// The number of rows the command affected (`PQcmdTuples`); 0 when the command reports none.
    package var affectedRows: Int {
        if let givenTag { return givenTag.split(separator: " ").last.flatMap { Int($0) } ?? 0 }
        return PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
    }

    /// The command tag, e.g. `INSERT 0 3` or `SELECT 10` (`PQcmdStatus`).
    package var commandTag: String { givenTag ?? PQcmdStatus(result).map { String(cString: $0) } ?? "" }

    /// Takes ownership of a finished, successful result.
    init(taking result: OpaquePointer) {
        self.result = result
        rowCount = Int(PQntuples(result))
        let count = PQnfields(result)
        columnCount = Int(count)
        columnTypes = (0..<count).map { PostgresType(rawValue: PQftype(result, $0)) }
        givenTag = nil
    }

    /// Takes ownership of one row of a statement read in single-row mode (see
    /// ``Connection/queryRows(_:_:_:)``), with the column types of the statement's first row: the rows of
    /// one statement share them, so they are read once, not per row. Such a result reports no command tag.
    init(takingRow result: OpaquePointer, columnTypes: [PostgresType]) {
        self.result = result
        rowCount = Int(PQntuples(result))
        columnCount = columnTypes.count
        self.columnTypes = columnTypes
        givenTag = ""
    }

    /// A result made in memory, without a server, for tests that script a connection: `rows` of binary
    /// cells (`nil` for NULL) in `columns`, reporting `commandTag` (its last number as ``affectedRows``, as
    /// libpq reads it).
    ///
    /// - Throws: ``LibPQError`` `.encoding` for a row whose cell count is not the column count, or
    ///   when libpq cannot allocate the result.
    package init(columns: [Column], rows: [[[UInt8]?]], commandTag: String) throws {
        guard rows.allSatisfy({ $0.count == columns.count }) else {
            throw LibPQError(.encoding, "a made result's rows must each have \(columns.count) cells")
        }
        guard let made = PQmakeEmptyPGresult(nil, PGRES_TUPLES_OK) else {
            throw LibPQError(.encoding, "libpq could not allocate a result")
        }
        let names = columns.map { strdup($0.name) }
        defer { names.forEach { free($0) } }
        var descriptions = columns.indices.map { index in
            PGresAttDesc(
                name: names[index], tableid: 0, columnid: 0, format: 1, typid: columns[index].type.rawValue,
                typlen: -1, atttypmod: -1)
        }
        var stored = PQsetResultAttrs(made, Int32(columns.count), &descriptions) == 1
        for (row, cells) in rows.enumerated() where stored {
            for (column, cell) in cells.enumerated() where stored {
                // PQsetvalue copies the bytes into the result's own memory; -1 is NULL. One byte more, so that
                // an empty cell still has an address.
                var bytes = (cell ?? []) + [0]
                let length = cell.map { Int32($0.count) } ?? -1
                stored =
                    bytes.withUnsafeMutableBytes { buffer in
                        guard let base = buffer.baseAddress else { return 0 }
                        return PQsetvalue(
                            made, Int32(row), Int32(column), base.assumingMemoryBound(to: CChar.self), length)
                    } == 1
            }
        }
        guard stored else {
            PQclear(made)
            throw LibPQError(.encoding, "libpq could not fill a made result")
        }
        self.result = made
        rowCount = rows.count
        columnCount = columns.count
        columnTypes = columns.map(\.type)
        givenTag = commandTag
    }

    /// The columns of a result, as ``columns`` reports them.
    static func columns(of result: OpaquePointer) -> [Column] {
        (0..<PQnfields(result)).map { index in
            Column(
                name: PQfname(result, index).map { String(cString: $0) } ?? "",
                type: PostgresType(rawValue: PQftype(result, index)))
        }
    }

    deinit { PQclear(result) }

    /// A cell's bytes without checks or copies, for a decoder that reads many cells in a loop: `nil` for NULL.
    ///
    /// The caller keeps `row` and `column` in range and this result alive while it reads the bytes, which
    /// point into libpq's result. Package-only: the package accessors check and copy.
    package func unsafeBytes(row: Int32, column: Int32) -> UnsafeRawBufferPointer? {
        let length = Int(PQgetlength(result, row, column))
        // A NULL has length 0: only an empty cell needs the third call to tell the two apart.
        if length == 0, PQgetisnull(result, row, column) == 1 { return nil }
        guard let pointer = PQgetvalue(result, row, column) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: UnsafeRawPointer(pointer), count: length)
    }

    private func inRange(_ row: Int, _ column: Int) -> Bool {
        row >= 0 && row < rowCount && column >= 0 && column < columnCount
    }

    /// The index of the first column called `name`, or `nil`.
    package func columnIndex(named name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }

    /// Whether the cell is SQL NULL (or out of range).
    package func isNull(row: Int, column: Int) -> Bool {
        !inRange(row, column) || PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// A copy of the cell with its column's type.
    package func value(row: Int, column: Int) -> PostgresValue {
        let type = column >= 0 && column < columnCount ? columnTypes[column] : .unspecified
        return withBytes(row: row, column: column) { bytes in
            PostgresValue(type: type, bytes: bytes.map { [UInt8]($0) })
        }
    }

    /// Calls `body` with the cell's binary bytes (valid only inside `body`), or `nil` for NULL.
    package func withBytes<R>(row: Int, column: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard inRange(row, column) else { return try body(nil) }
        return try body(unsafeBytes(row: Int32(row), column: Int32(column)))
    }

    /// Decodes a cell; NULL only decodes into an `Optional` type.
    ///
    /// - Throws: ``LibPQError`` `.decoding` naming the column, its server type and the Swift type when the
    ///   cell is NULL (for a non-optional type) or does not fit.
    package func decode<T: PostgresDecodable>(_ type: T.Type, row: Int, column: Int) throws -> T {
        guard inRange(row, column) else { throw outOfRange(row: row, column: column) }
        let serverType = columnTypes[column]
        do {
            return try withBytes(row: row, column: column) { bytes in
                guard let bytes else { return try T.decodeNull(type: serverType) }
                return try T.decode(from: bytes, type: serverType)
            }
        } catch let error as LibPQError {
            throw decodingFailure(error, row: row, column: column, as: T.self)
        }
    }

    /// Whether a cell is inside the result, for decoders that read cells through ``unsafeBytes(row:column:)``.
    package func contains(row: Int, column: Int) -> Bool { inRange(row, column) }

    /// The error for a cell outside the result.
    package func outOfRange(row: Int, column: Int) -> LibPQError {
        LibPQError(.decoding, "cell (\(row), \(column)) is outside the result (\(rowCount)x\(columnCount))")
    }

    /// A decoding error of a cell, naming its column, server type, row and the Swift type asked for.
    package func decodingFailure<T>(_ error: LibPQError, row: Int, column: Int, as type: T.Type) -> LibPQError {
        decodingFailure(error, row: row, column: column, asTypeNamed: "\(T.self)")
    }

    /// ``decodingFailure(_:row:column:as:)`` for a Swift type known by name.
    package func decodingFailure(_ error: LibPQError, row: Int, column: Int, asTypeNamed type: String) -> LibPQError {
        LibPQError(
            .decoding,
            "column \"\(columns[column].name)\" (\(columns[column].type)) row \(row) as \(type): \(error.message)")
    }

    /// Decodes a cell, giving `nil` for NULL.
    ///
    /// - Throws: ``LibPQError`` `.decoding` naming the column, its server type and the Swift type when the
    ///   cell does not fit.
    package func decodeIfPresent<T: PostgresDecodable>(_ type: T.Type, row: Int, column: Int) throws -> T? {
        if inRange(row, column), isNull(row: row, column: column) { return nil }
        return try decode(T.self, row: row, column: column)
    }
}
