@_spi(StoreImplementation) import CoreValue

extension SchemaMapping {
    /// The longest identifier PostgreSQL keeps (`NAMEDATALEN - 1` bytes); longer ones are silently truncated.
    package static let maximumIdentifierLength = 63

    /// Checks that every table and column name of the model reaches PostgreSQL unchanged and that no two
    /// tables share a name.
    ///
    /// PostgreSQL truncates identifiers longer than 63 bytes without an error, so two long names could
    /// become one table, and a statement could address a column by a name the server never stored. A join
    /// table is named `<Entity>_<relationship>`, which can equal an entity's name (`A_b`) or another join
    /// table's. Defaults must be writable as literals (a date default within PostgreSQL's range).
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidModel`` naming the entity and key (the first problem found).
    package func validate() throws {
        var tables: [String: String] = [:]  // table name -> what it stores
        func claim(_ table: String, for owner: String, entity: String, key: String?) throws {
            try checkLength(table, what: "table name", entity: entity, key: key)
            if let other = tables[table] {
                throw invalid(entity, key, "table \"\(table)\" of \(owner) has the same name as the table of \(other)")
            }
            tables[table] = owner
        }
        for entity in model.entities {
            // A subentity's rows are in its root's table.
            if entity.parent == nil {
                try claim(entity.name, for: "entity '\(entity.name)'", entity: entity.name, key: nil)
            }
            for attribute in entity.attributes {
                try checkLength(attribute.name, what: "column name", entity: entity.name, key: attribute.name)
                if case .date(let date) = attribute.defaultValue, !SQLLiteral.isRepresentable(date) {
                    throw invalid(
                        entity.name, attribute.name,
                        "default date \(date.timeIntervalSince1970) s since 1970 is not a finite date between "
                            + "year 1 and 294276")
                }
            }
            for relationship in foreignKeyRelationships(of: entity) {
                try checkLength(relationship.name, what: "column name", entity: entity.name, key: relationship.name)
            }
        }
        for entity in model.entities {
            for relationship in entity.declaredRelationships where storage(of: relationship, in: entity) == .joinTable {
                try claim(
                    Self.joinTableName(entity: entity.name, relationship: relationship.name),
                    for: "relationship '\(entity.name).\(relationship.name)'", entity: entity.name,
                    key: relationship.name)
            }
        }
    }

    private func checkLength(_ name: String, what: String, entity: String, key: String?) throws {
        let length = name.utf8.count
        guard length > Self.maximumIdentifierLength else { return }
        throw invalid(
            entity, key,
            "\(what) \"\(name)\" is \(length) bytes; PostgreSQL keeps at most \(Self.maximumIdentifierLength) "
                + "and would silently truncate it")
    }

    private func invalid(_ entity: String, _ key: String?, _ message: String) -> PostgresStoreError {
        let place = key.map { "'\(entity).\($0)'" } ?? "entity '\(entity)'"
        return PostgresStoreError(.invalidModel, "\(place): \(message)")
    }
}
