@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Turns the rows of a row statement (see ``FetchStatements``) into snapshots.
///
/// What a row needs from the model is worked out once per reader, not per row: a reader can be handed a
/// statement's rows in many results (`StatementRunner.runRows`), one row each.
struct RowReader {
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

    /// Appends one snapshot per row of `result` to `snapshots`: key, version, attributes, foreign keys;
    /// to-many lists start empty.
    ///
    /// - Throws: The driver's decoding error when a column does not hold the model's type.
    func append(_ result: QueryResult, to snapshots: inout [RowSnapshot]) throws {
        let serverTypes = result.columnTypes
        // The attribute columns are checked to be in the result once, not per cell (the rows are
        // `0..<rowCount`).
        if result.rowCount > 0, result.columnCount < foreignKeyStart {
            throw result.outOfRange(row: 0, column: result.columnCount)
        }
        for row in 0..<result.rowCount {
            // Key and version through the specialized cell decoder (see `BindEncoding.int64`).
            let key = try BindEncoding.int64(result, row: row, column: 0)
            let version = try BindEncoding.int64(result, row: row, column: 1)
            var values: [AttributeValue?] = []
            values.reserveCapacity(types.count)
            for (offset, type) in types.enumerated() {
                let column = attributeStart + offset
                values.append(
                    try BindEncoding.attributeValue(
                        inRange: result, row: row, column: column, type: type, serverType: serverTypes[column]))
            }
            let attributes = AttributeValues(layout: layout, complete: values)
            var toOne: [String: Int64?] = [:]
            var toMany: [String: [Int64]] = [:]
            for name in toManyNames { toMany[name] = [] }
            for name in toOneNames { toOne[name] = .some(nil) }
            for (offset, name) in foreignKeyNames.enumerated() {
                toOne[name] = .some(try result.decodeIfPresent(Int64.self, row: row, column: foreignKeyStart + offset))
            }
            for (offset, (name, isToMany)) in linked.enumerated() {
                let keys = try result.decode([Int64].self, row: row, column: linkStart + offset)
                if isToMany { toMany[name] = keys } else { toOne[name] = .some(keys.first) }
            }
            snapshots.append(
                RowSnapshot(
                    id: .permanent(entity.name, key), version: version, attributes: attributes, toOne: toOne,
                    toMany: toMany))
        }
    }
}
