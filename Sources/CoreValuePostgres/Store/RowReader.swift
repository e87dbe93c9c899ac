@_spi(StoreImplementation) import CoreValue
import LibPQ

/// Turns the result of a row statement (see ``FetchStatements``) into snapshots.
struct RowReader {
    let mapping: SchemaMapping
    let entity: Entity
    /// The entity's attribute layout: every snapshot's values are stored in it, by column position.
    let layout: AttributeLayout

    /// One snapshot per row: key, version, attributes, foreign keys; to-many lists start empty.
    ///
    /// - Throws: The driver's decoding error when a column does not hold the model's type.
    func snapshots(from result: QueryResult) throws -> [RowSnapshot] {
        let foreignKeys = mapping.foreignKeyRelationships(of: entity)
        let attributeStart = 2
        let foreignKeyStart = attributeStart + entity.attributes.count
        var snapshots: [RowSnapshot] = []
        snapshots.reserveCapacity(result.rowCount)
        let serverTypes = result.columns.map(\.type)
        // Per column, what the rows need: plain values, not the model's structs (copying those per cell
        // retained and released their names).
        let types = entity.attributes.map(\.type)
        let foreignKeyNames = foreignKeys.map(\.name)
        let toOneNames = entity.relationships.filter { !$0.isToMany }.map(\.name)
        let toManyNames = entity.relationships.filter(\.isToMany).map(\.name)
        // After the foreign keys: one key array per relationship kept elsewhere (FetchStatements.select).
        let linkStart = foreignKeyStart + foreignKeys.count
        let linked = FetchStatements.separatelyLoaded(entity, mapping).map { ($0.name, $0.isToMany) }
        // Key and version through the specialized cell decoder (`QueryResult.decode` is generic in another
        // module, so it runs unspecialized).
        func integer(_ row: Int, _ column: Int) throws -> Int64 {
            let value = try BindEncoding.attributeValue(
                result, row: row, column: column, type: .int64)
            guard case .int64(let number) = value else {
                throw LibPQError(.decoding, "column \(column) row \(row) is NULL, expected a key or version")
            }
            return number
        }
        for row in 0..<result.rowCount {
            let key = try integer(row, 0)
            let version = try integer(row, 1)
            var values: [AttributeValue?] = []
            values.reserveCapacity(types.count)
            for (offset, type) in types.enumerated() {
                let column = attributeStart + offset
                values.append(
                    try BindEncoding.attributeValue(
                        result, row: row, column: column, type: type, serverType: serverTypes[column]))
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
        return snapshots
    }
}
