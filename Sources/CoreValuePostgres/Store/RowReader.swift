@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Turns the rows of a row statement (see ``FetchStatements``) into snapshots.
///
/// What a row needs from the model is worked out once per reader, not per row: a reader can be handed a
/// statement's rows in many results (`StatementRunner.runRows`), one row each. An object: a read hands its
/// reader along by reference (as a struct of seven arrays, each copy retained and released them all).
final class RowReader: Sendable {
    let entity: Entity
    /// The entity's attribute layout: every snapshot's values are stored in it, by column position.
    let layout: AttributeLayout
    /// Per attribute column, what the rows need: plain values, not the model's structs (copying those per
    /// cell retained and released their names).
    private let types: [AttributeType]
    private let foreignKeyNames: [String]
    private let toOneNames: [String]
    private let toManyNames: [String]
    /// After the foreign keys: one key array per relationship kept elsewhere (FetchStatements.select).
    private let linked: [(name: String, isToMany: Bool)]
    private let attributeStart = 2
    private var foreignKeyStart: Int { attributeStart + types.count }
    private var linkStart: Int { foreignKeyStart + foreignKeyNames.count }

    init(mapping: SchemaMapping, entity: Entity, layout: AttributeLayout) {
        self.entity = entity
        self.layout = layout
        types = entity.attributes.map(\.type)
        foreignKeyNames = mapping.foreignKeyRelationships(of: entity).map(\.name)
        toOneNames = entity.relationships.filter { !$0.isToMany }.map(\.name)
        toManyNames = entity.relationships.filter(\.isToMany).map(\.name)
        linked = FetchStatements.separatelyLoaded(entity, mapping).map { ($0.name, $0.isToMany) }
    }

    /// The number of columns a row statement selects (``FetchStatements``): key, version, attributes, foreign
    /// keys, linked key arrays.
    var columnCount: Int { linkStart + linked.count }

    /// Appends one snapshot per row of `result` to `snapshots`: key, version, attributes, foreign keys;
    /// to-many lists start empty.
    ///
    /// - Throws: The driver's decoding error when a column does not hold the model's type.
    func append(_ result: QueryResult, to snapshots: inout [RowSnapshot]) throws {
        // The attribute columns are checked to be in the result once, not per cell (the rows are
        // `0..<rowCount`).
        if result.rowCount > 0, result.columnCount < foreignKeyStart {
            throw result.outOfRange(row: 0, column: result.columnCount)
        }
        let serverTypes = result.columnTypes
        for row in 0..<result.rowCount {
            var cells = ResultCells(result: result, serverTypes: serverTypes, row: row)
            snapshots.append(try snapshot(&cells))
        }
    }

    /// Appends the snapshot of one row of a binary COPY of the row statement (``SQL/binaryCopyText``),
    /// whose attribute columns are cast to their column types (``FetchStatements``).
    ///
    /// - Throws: The driver's `.decoding` error for a row of another width or a field that does not hold
    ///   its column's type, naming the column.
    func append(_ row: inout CopyRow, to snapshots: inout [RowSnapshot]) throws {
        guard row.fieldCount == columnCount else {
            throw LibPQError(
                .decoding,
                "a COPY row of \(entity.name) has \(row.fieldCount) fields; the statement selects \(columnCount)")
        }
        var cells = CopyCells(row: row)
        do {
            snapshots.append(try snapshot(&cells))
        } catch let error as LibPQError {
            // The field that failed is the last one read.
            throw LibPQError(
                .decoding,
                "column \"\(columnName(cells.row.fieldsRead - 1))\" of a COPY row of \(entity.name): \(error.message)")
        }
    }

    /// The column name `RowReader` selects at `column`, for errors.
    private func columnName(_ column: Int) -> String {
        switch column {
        case 0: return SchemaMapping.primaryKeyColumn
        case 1: return SchemaMapping.versionColumn
        case attributeStart..<foreignKeyStart: return entity.attributes[column - attributeStart].name
        case foreignKeyStart..<linkStart: return foreignKeyNames[column - foreignKeyStart]
        default: return linked.indices.contains(column - linkStart) ? linked[column - linkStart].name : "#\(column)"
        }
    }

    /// One row's snapshot, its cells read in column order.
    private func snapshot(_ cells: inout some RowCells) throws -> RowSnapshot {
        let key = try cells.key()
        let version = try cells.key()
        // Reserved and appended to: of the ways to build the array, the cheapest (measured against filling
        // it with nils and assigning, and against `init(unsafeUninitializedCapacity:)`).
        var values: [AttributeValue?] = []
        values.reserveCapacity(types.count)
        for type in types { values.append(try cells.attribute(type)) }
        let attributes = AttributeValues(layout: layout, complete: values)
        var toOne: [String: Int64?] = [:]
        var toMany: [String: [Int64]] = [:]
        for name in toManyNames { toMany[name] = [] }
        for name in toOneNames { toOne[name] = .some(nil) }
        for name in foreignKeyNames { toOne[name] = .some(try cells.foreignKey()) }
        for (name, isToMany) in linked {
            let keys = try cells.keys()
            if isToMany { toMany[name] = keys } else { toOne[name] = .some(keys.first) }
        }
        return RowSnapshot(
            id: .permanent(entity.name, key), version: version, attributes: attributes, toOne: toOne, toMany: toMany)
    }
}

/// The cells of one row, read in column order by ``RowReader``: from a result (single-row mode) or from
/// a binary COPY row.
private protocol RowCells {
    /// A non-NULL `int8` (the key, the version).
    mutating func key() throws -> Int64
    /// An attribute's value (``AttributeValue/null`` for NULL).
    mutating func attribute(_ type: AttributeType) throws -> AttributeValue
    /// A foreign key, `nil` for NULL.
    mutating func foreignKey() throws -> Int64?
    /// A linked key array.
    mutating func keys() throws -> [Int64]
}

/// A row of a result, each cell read through libpq and checked against the column's server type.
private struct ResultCells: RowCells {
    let result: QueryResult
    let serverTypes: [PostgresType]
    let row: Int
    var column = 0

    mutating func key() throws -> Int64 {
        defer { column += 1 }
        // Through the specialized cell decoder (see `BindEncoding.int64`).
        return try BindEncoding.int64(result, row: row, column: column)
    }

    mutating func attribute(_ type: AttributeType) throws -> AttributeValue {
        defer { column += 1 }
        return try BindEncoding.attributeValue(
            inRange: result, row: row, column: column, type: type, serverType: serverTypes[column])
    }

    mutating func foreignKey() throws -> Int64? {
        defer { column += 1 }
        return try result.decodeIfPresent(Int64.self, row: row, column: column)
    }

    mutating func keys() throws -> [Int64] {
        defer { column += 1 }
        return try result.decode([Int64].self, row: row, column: column)
    }
}

/// A binary COPY row, read field by field; each column is of the type the row statement casts it to.
/// Errors name no column: ``RowReader/append(_:to:)-(CopyRow,_)`` adds it.
private struct CopyCells: RowCells {
    var row: CopyRow

    mutating func key() throws -> Int64 {
        guard let bytes = try row.nextField() else { throw LibPQError(.decoding, "NULL, expected a key or version") }
        return try Int64.decode(from: bytes, type: .int8)
    }

    mutating func attribute(_ type: AttributeType) throws -> AttributeValue {
        guard let bytes = try row.nextField() else { return .null }
        return try BindEncoding.attributeValue(bytes, type: type, serverType: nil)
    }

    mutating func foreignKey() throws -> Int64? {
        guard let bytes = try row.nextField() else { return nil }
        return try Int64.decode(from: bytes, type: .int8)
    }

    mutating func keys() throws -> [Int64] {
        guard let bytes = try row.nextField() else { throw LibPQError(.decoding, "NULL, expected a key array") }
        return try [Int64].decode(from: bytes, type: .int8Array)
    }
}

/// Every entity's ``RowReader``, made once per store: a request's read would otherwise build its column lists
/// again (two arrays and a walk of the model's relationships per read).
struct RowReaders {
    private let readers: [String: RowReader]
    private let mapping: SchemaMapping
    private let index: ModelIndex

    init(mapping: SchemaMapping, index: ModelIndex) throws {
        self.mapping = mapping
        self.index = index
        var readers: [String: RowReader] = [:]
        for entity in mapping.model.entities {
            readers[entity.name] = RowReader(
                mapping: mapping, entity: entity, layout: try index.entity(entity.name).layout)
        }
        self.readers = readers
    }

    /// The reader of the rows of the entity named `name` (its ``RowReader/entity`` is the model's).
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` for an entity the model lacks.
    func reader(named name: String) throws -> RowReader {
        guard let reader = readers[name] else { throw CVManagedStructError.unknownEntity(name) }
        return reader
    }

    /// The reader of `entity`'s rows.
    ///
    /// - Throws: `CVManagedStructError.unknownEntity` for an entity the model lacks.
    func reader(for entity: Entity) throws -> RowReader {
        if let reader = readers[entity.name] { return reader }
        return RowReader(mapping: mapping, entity: entity, layout: try index.entity(entity.name).layout)
    }
}
