@_spi(StoreImplementation) import CoreValue

/// How a model maps to PostgreSQL tables: one table per entity (per hierarchy with inheritance, see
/// ``entityColumn``) and one join table per owning to-many.
///
/// Entity tables have a surrogate key `"_pk"` (`bigint generated always as identity`) and a version column
/// `"_version"`; every attribute is a column of its name; every owning to-one relationship is a `bigint`
/// column of its name referencing the destination's `"_pk"`. A join table is named
/// `<Entity>_<relationship>` and holds `"owner"`, `"member"` and, when ordered, `"position"`.
package struct SchemaMapping: Sendable {
    /// The surrogate-key column of every entity table.
    package static let primaryKeyColumn = "_pk"
    /// The optimistic-locking version column of every entity table.
    package static let versionColumn = "_version"
    /// The owner column of a join table.
    package static let ownerColumn = "owner"
    /// The member column of a join table.
    package static let memberColumn = "member"
    /// The position column of an ordered join table.
    package static let positionColumn = "position"

    /// A join table's primary key. Reads by owner and deletes of a member (and reads of the inverse side)
    /// each need an index that leads with their column. An ordered table's UNIQUE (owner, position) serves
    /// the owner, so its key leads with the member; otherwise the key leads with the owner and the member
    /// gets an index of its own (see ``joinTables(_:)``). Each index is written on every link's insert and
    /// position update, so none is doubled: for 1,000 reordered links, a third index cost 15-40% more.
    package static func joinTableKey(ordered: Bool) -> [String] {
        ordered ? [memberColumn, ownerColumn] : [ownerColumn, memberColumn]
    }
    /// The collation of text columns: `C`, byte order, so sorting and comparisons agree with `MemoryStore` and
    /// do not depend on the database's locale.
    package static let textCollation = "C"

    /// The model.
    package let model: ManagedObjectModel
    /// Whether the store's history tables are part of the schema (see ``historyTables``).
    package let recordsHistory: Bool
    /// Whether the commit table is part of the schema (see ``commitTableDefinition``).
    package let resolvesCommits: Bool

    /// Creates the mapping of a model, with the history tables when the store records history, and the
    /// commit table unless the store leaves lost commits unresolved.
    package init(model: ManagedObjectModel, recordsHistory: Bool = false, resolvesCommits: Bool = true) {
        self.model = model
        self.recordsHistory = recordsHistory
        self.resolvesCommits = resolvesCommits
    }

    /// The name of the join table that stores an owning to-many relationship.
    package static func joinTableName(entity: String, relationship: String) -> String {
        entity + "_" + relationship
    }

    /// Every table, entity tables first (in model order), then join tables (in model order), then with
    /// ``recordsHistory`` the history tables, then with ``resolvesCommits`` the commit table.
    package var tables: [TableDefinition] {
        // A subentity's rows are in its root's table.
        model.entities.filter { $0.parent == nil }.map(entityTable) + model.entities.flatMap(joinTables)
            + (recordsHistory ? historyTables : []) + (resolvesCommits ? [commitTableDefinition] : [])
    }

    /// The owning to-one relationships of an entity, stored as foreign-key columns, in declaration order.
    package func foreignKeyRelationships(of entity: Entity) -> [Relationship] {
        entity.relationships.filter { storage(of: $0, in: entity) == .foreignKey }
    }

    /// The table of an entity without a parent: its own rows and, in a hierarchy, its subentities'.
    package func entityTable(_ entity: Entity) -> TableDefinition {
        var columns = [
            ColumnDefinition(
                name: Self.primaryKeyColumn, sqlType: "bigint", isNullable: false,
                constraints: "GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
            ColumnDefinition(name: Self.versionColumn, sqlType: "bigint", isNullable: false, constraints: "DEFAULT 1"),
        ]
        let members = tableMembers(of: entity)
        if members.count > 1 || isHierarchical(entity.name) {
            columns.append(ColumnDefinition(name: Self.entityColumn, sqlType: "text", isNullable: false))
        }
        var foreignKeys: [ForeignKeyDefinition] = []
        for member in members {
            let own = ownProperties(of: member, root: entity)
            addColumns(own.attributes, nullable: member.name != entity.name, to: &columns)
            for relationship in own.relationships where storage(of: relationship, in: member) == .foreignKey {
                columns.append(ColumnDefinition(name: relationship.name, sqlType: "bigint", isNullable: true))
                foreignKeys.append(
                    ForeignKeyDefinition(
                        column: relationship.name, referencedTable: tableName(of: relationship.destination),
                        onDelete: onDeleteAction(of: relationship)))
            }
        }
        return TableDefinition(
            name: entity.name, columns: columns, tableConstraints: [], foreignKeys: foreignKeys,
            indexedColumns: foreignKeys.map(\.column), isJoinTable: false)
    }

    /// Appends a column per attribute; `nullable` for a subentity's attributes in its root's table.
    ///
    /// Siblings or cousins may each declare an attribute of one name and type (the model refuses other
    /// repeats, and unique ones): they share the column the first added, which keeps its `DEFAULT` only when
    /// every declaration has the same default. The column's default serves rows a migration adds the column
    /// to; a save writes each entity's own default itself.
    private func addColumns(_ attributes: [Attribute], nullable: Bool, to columns: inout [ColumnDefinition]) {
        for attribute in attributes {
            var constraints: [String] = []
            var literal: String?
            if let value = attribute.defaultValue, !value.isNull {
                literal = SQLLiteral.render(value)
                constraints.append("DEFAULT " + SQLLiteral.render(value))
            }
            if let shared = columns.firstIndex(where: { $0.name == attribute.name }) {
                if columns[shared].defaultLiteral != literal {
                    columns[shared].defaultLiteral = nil
                    columns[shared].constraints = ""
                }
                continue
            }
            if attribute.isUnique { constraints.append("UNIQUE") }
            columns.append(
                ColumnDefinition(
                    name: attribute.name, sqlType: ColumnType.sqlName(of: attribute.type),
                    isNullable: attribute.isOptional || nullable, constraints: constraints.joined(separator: " "),
                    collation: ColumnType.isText(attribute.type) ? Self.textCollation : nil, defaultLiteral: literal,
                    isUnique: attribute.isUnique))
        }
    }

    /// The join tables an entity owns (those of the relationships it declares: inherited ones share the
    /// declaring entity's).
    package func joinTables(_ entity: Entity) -> [TableDefinition] {
        entity.declaredRelationships.filter { storage(of: $0, in: entity) == .joinTable }.map { relationship in
            let owner = SQLIdentifier.quote(Self.ownerColumn)
            let member = SQLIdentifier.quote(Self.memberColumn)
            var columns = [
                ColumnDefinition(name: Self.ownerColumn, sqlType: "bigint", isNullable: false),
                ColumnDefinition(name: Self.memberColumn, sqlType: "bigint", isNullable: false),
            ]
            let isOrdered = relationship.kind == .orderedToMany
            let key = Self.joinTableKey(ordered: isOrdered).map(SQLIdentifier.quote).joined(separator: ", ")
            var constraints = ["PRIMARY KEY (\(key))"]
            // One-to-many: a member belongs to one owner at most. Deferred, so a save may move members
            // between owners in any statement order.
            let isOneToMany = model.inverse(of: relationship).map { !$0.relationship.isToMany } ?? false
            if isOneToMany {
                constraints.append("UNIQUE (\(member)) DEFERRABLE INITIALLY DEFERRED")
            }
            if isOrdered {
                columns.append(ColumnDefinition(name: Self.positionColumn, sqlType: "integer", isNullable: false))
                let position = SQLIdentifier.quote(Self.positionColumn)
                constraints.append("UNIQUE (\(owner), \(position)) DEFERRABLE INITIALLY DEFERRED")
            }
            return TableDefinition(
                name: Self.joinTableName(entity: entity.name, relationship: relationship.name),
                columns: columns, tableConstraints: constraints,
                foreignKeys: [
                    ForeignKeyDefinition(
                        column: Self.ownerColumn, referencedTable: tableName(of: entity.name), onDelete: "CASCADE"),
                    ForeignKeyDefinition(
                        column: Self.memberColumn, referencedTable: tableName(of: relationship.destination),
                        onDelete: "CASCADE"),
                ],
                // The member's index: the key's, or the one-to-many constraint's, or its own.
                indexedColumns: isOrdered || isOneToMany ? [] : [Self.memberColumn], isJoinTable: true)
        }
    }

    /// The `ON DELETE` action of a to-one relationship's foreign-key column.
    ///
    /// A delete rule says what deleting the relationship's *source* does to its destinations (Core Data's
    /// meaning; the context applies it). The foreign key's `ON DELETE` governs the opposite direction, what
    /// deleting the *destination* does to the source row, which is the inverse relationship's rule: cascade
    /// deletes the source row, deny is `NO ACTION` (checked at statement end; the context refuses first),
    /// anything else (nullify, no action, or no inverse) sets the column to NULL: the store keeps no dangling
    /// link, whatever the context left alone.
    func onDeleteAction(of relationship: Relationship) -> String {
        switch model.inverse(of: relationship)?.relationship.deleteRule {
        case .cascade: return "CASCADE"
        case .deny: return "NO ACTION"
        case .nullify, .noAction, nil: return "SET NULL"
        }
    }
}
