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
        for row in 0..<result.rowCount {
            let key = try result.decode(Int64.self, row: row, column: 0)
            let version = try result.decode(Int64.self, row: row, column: 1)
            var values: [AttributeValue?] = []
            values.reserveCapacity(entity.attributes.count)
            for (offset, attribute) in entity.attributes.enumerated() {
                let column = attributeStart + offset
                values.append(
                    try BindEncoding.attributeValue(
                        result, row: row, column: column, type: attribute.type,
                        serverType: serverTypes[column]))
            }
            let attributes = AttributeValues(layout: layout, complete: values)
            var toOne: [String: Int64?] = [:]
            var toMany: [String: [Int64]] = [:]
            for relationship in entity.relationships {
                if relationship.isToMany {
                    toMany[relationship.name] = []
                } else {
                    toOne[relationship.name] = .some(nil)
                }
            }
            for (offset, relationship) in foreignKeys.enumerated() {
                toOne[relationship.name] = .some(
                    try result.decodeIfPresent(Int64.self, row: row, column: foreignKeyStart + offset))
            }
            snapshots.append(
                RowSnapshot(
                    id: .permanent(entity.name, key), version: version, attributes: attributes, toOne: toOne,
                    toMany: toMany))
        }
        return snapshots
    }
}
