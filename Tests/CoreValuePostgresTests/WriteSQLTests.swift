@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Testing

@testable import CoreValuePostgres

@Suite struct WriteSQLTests {
    let statements = WriteStatements(schema: "s")
    let name = ColumnValues(name: "name", type: .string, values: [.string("a"), .string("b")])

    @Test func insertsUnnestInInputOrder() {
        let sql = statements.insert(into: "Car", columns: [name], rowCount: 2)
        #expect(
            sql.text
                == #"INSERT INTO "s"."Car" AS t ("name") SELECT u."name" FROM unnest($1::text[]) WITH ORDINALITY AS u("name", "_i") ORDER BY u."_i" RETURNING t."_pk", t."_version""#
        )
        #expect(sql.binds == [.array(.string, [.string("a"), .string("b")])])
        let empty = statements.insert(into: "E", columns: [], rowCount: 3)
        #expect(
            empty.text
                == #"INSERT INTO "s"."E" ("_version") SELECT 1 FROM generate_series(1, $1::bigint) RETURNING "_pk", "_version""#
        )
    }

    @Test func oneRowIsUpdatedWithScalarParameters() {
        // The columns the row sets: one it leaves unset ("doors") is not among them.
        let price = ColumnValue(name: "price", type: .int32, value: .int32(5))
        let checked = statements.updateRow(table: "Car", key: 7, version: 3, columns: [price])
        #expect(
            checked.text
                == #"UPDATE "s"."Car" AS t SET "price" = $1::integer, "_version" = t."_version" + 1 WHERE t."_pk" = $2::bigint AND t."_version" = $3::bigint RETURNING t."_pk", t."_version""#
        )
        #expect(checked.binds == [.scalar(.int32, .int32(5)), .int64(7), .int64(3)])
        // Without a version read (a unique struct written whole): no check, another statement text.
        let unchecked = statements.updateRow(table: "Car", key: 7, version: nil, columns: [price])
        #expect(!unchecked.text.contains("_version\" = $"))
        #expect(unchecked.binds == [.scalar(.int32, .int32(5)), .int64(7)])
        // The same shape again, other values: the text kept, the new values bound.
        let other = ColumnValue(name: "price", type: .int32, value: .int32(9))
        let again = statements.updateRow(table: "Car", key: 8, version: 4, columns: [other])
        #expect(again.text == checked.text)
        #expect(again.binds == [.scalar(.int32, .int32(9)), .int64(8), .int64(4)])
        // Another shape (another column set) has its own text.
        let doors = ColumnValue(name: "doors", type: .int32, value: .int32(3))
        let both = statements.updateRow(table: "Car", key: 8, version: 4, columns: [other, doors])
        #expect(both.text.contains(#""doors" = $2::integer"#))
        #expect(both.binds == [.scalar(.int32, .int32(9)), .scalar(.int32, .int32(3)), .int64(8), .int64(4)])
        // A kept text is what rendering the parts gives.
        #expect(checked.renderedOnce().text == checked.text)
    }

    @Test func aTemplateTakesOneBindPerPlaceholder() {
        let sql: SQL = "SELECT \(bind: .int64(1)), \(bind: .int64(2))"
        let kept = sql.renderedOnce()
        #expect(kept.replacingBinds([.int64(3)]) == nil)
        #expect(kept.replacingBinds([.int64(3), .int64(4), .int64(5)]) == nil)
        let replaced = kept.replacingBinds([.int64(3), .int64(4)])
        #expect(replaced?.text == "SELECT $1, $2")
        #expect(replaced?.binds == [.int64(3), .int64(4)])
        #expect(replaced == sql.replacingBinds([.int64(3), .int64(4)]))
    }

    @Test func aStatementWithReplacedBindsKeepsThemWhenItIsWrappedOrExtended() throws {
        let kept = (("SELECT \(bind: .int64(1))" as SQL) + " WHERE x = \(bind: .text("a"))").renderedOnce()
        let replaced = try #require(kept.replacingBinds([.int64(7), .text("b")]))
        #expect(replaced.keptText == "SELECT $1 WHERE x = $2")
        let wrapped: SQL = "WITH w AS (\(replaced)) SELECT \(bind: .int64(9))"
        #expect(wrapped.text == "WITH w AS (SELECT $1 WHERE x = $2) SELECT $3")
        #expect(wrapped.binds == [.int64(7), .text("b"), .int64(9)])
        #expect(wrapped.keptText == nil)
        var extended = replaced
        extended.append(" AND y = \(bind: .int64(8))")
        #expect(extended.text == "SELECT $1 WHERE x = $2 AND y = $3")
        #expect(extended.binds == [.int64(7), .text("b"), .int64(8)])
        #expect(kept.binds == [.int64(1), .text("a")])
    }

    @Test func upsertsOnTheIdentifier() {
        let id = ColumnValues(name: "id", type: .string, values: [.string("x"), .string("y")])
        let sql = statements.upsert(into: "Author", key: Attribute("id", .string, unique: true), columns: [id, name])
        #expect(
            sql.text
                == #"INSERT INTO "s"."Author" AS t ("id", "name") SELECT u."id", u."name" FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u("id", "name", "_i") ORDER BY u."id" COLLATE "C", u."_i" "#
                + #"ON CONFLICT ("id") DO UPDATE SET "name" = EXCLUDED."name", "_version" = t."_version" + 1 RETURNING t."_pk", t."_version", t."id""#
        )
        #expect(sql.binds.count == 2)
    }

    @Test func newRowsAreInsertedInIdentifierOrderWithoutOnConflict() {
        let id = ColumnValues(name: "id", type: .string, values: [.string("x"), .string("y")])
        let key = Attribute("id", .string, unique: true)
        let sql = statements.insertNew(into: "Author", key: key, columns: [id, name])
        #expect(
            sql.text
                == #"INSERT INTO "s"."Author" AS t ("id", "name") SELECT u."id", u."name" FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u("id", "name", "_i") ORDER BY u."id" COLLATE "C", u."_i" "#
                + #"RETURNING t."_pk", t."_version", t."id""#
        )
        #expect(sql.binds.count == 2)
        // Whether a stored row could share an identifier: text in byte order, as the rows are sent.
        let probe = statements.anyRow(in: "Author", key: key, from: .string("x"))
        #expect(
            probe.text
                == #"SELECT 1 FROM (SELECT max(t."id" COLLATE "C") AS m FROM "s"."Author" AS t) AS s WHERE s.m >= $1::text"#
        )
        #expect(probe.binds == [.scalar(.string, .string("x"))])
        let numeric = statements.anyRow(in: "Product", key: Attribute("id", .int32, unique: true), from: .int32(3))
        #expect(
            numeric.text
                == #"SELECT 1 FROM (SELECT max(t."id") AS m FROM "s"."Product" AS t) AS s WHERE s.m >= $1::integer"#
        )
    }

    @Test func aStreamOfNewRowsReservesItsKeysAndIsCopied() {
        let reserve = statements.reserveKeys(table: "Product", count: 4_500)
        #expect(
            reserve.text
                == #"SELECT array_agg(nextval((SELECT pg_get_serial_sequence($1, $2))::regclass)) FROM generate_series(1, $3::bigint)"#
        )
        // The table's name as the function parses it (quoted, so a name with capitals or quotes stays one
        // identifier), bound: never in the SQL text.
        #expect(
            reserve.binds == [
                .scalar(.string, .string(#""s"."Product""#)), .scalar(.string, .string("_pk")),
                .scalar(.int64, .int64(4_500)),
            ])
        let copy = statements.copyNew(
            into: #"Odd "name""#, attributes: [Attribute("id", .int32, unique: true), Attribute("name", .string)])
        #expect(copy.text == #"COPY "s"."Odd ""name""" ("_pk", "_version", "id", "name") FROM STDIN (FORMAT binary)"#)
        #expect(copy.binds.isEmpty)
    }

    @Test func rowLocksAreTakenInIdentifierThenKeyOrder() {
        let unique = statements.lock(table: "Author", keys: [3, 1], orderedBy: Attribute("id", .string, unique: true))
        #expect(
            unique.text
                == #"SELECT t."_pk" FROM "s"."Author" AS t WHERE t."_pk" = ANY($1::bigint[]) ORDER BY t."id" COLLATE "C", t."_pk" FOR NO KEY UPDATE"#
        )
        #expect(unique.binds == [.int64Array([3, 1])])
        let plain = statements.lock(table: "Car", keys: [2], orderedBy: nil)
        #expect(
            plain.text
                == #"SELECT t."_pk" FROM "s"."Car" AS t WHERE t."_pk" = ANY($1::bigint[]) ORDER BY t."_pk" FOR NO KEY UPDATE"#
        )
        let numeric = statements.lock(table: "Product", keys: [2], orderedBy: Attribute("id", .int32, unique: true))
        #expect(numeric.text.contains(#"ORDER BY t."id", t."_pk" FOR NO KEY UPDATE"#))
    }

    @Test func batchedUpdatesLockTheirRowsInOrderFirst() {
        let sql = statements.update(
            table: "Author", keys: [2, 1], versions: [nil, nil], columns: [name],
            lockOrder: LockOrder(attribute: Attribute("id", .string, unique: true)))
        #expect(
            sql.text
                == #"WITH "_locked" AS (SELECT t."_pk" FROM "s"."Author" AS t WHERE t."_pk" = ANY($1::bigint[]) ORDER BY t."id" COLLATE "C", t."_pk" FOR NO KEY UPDATE) "#
                + #"UPDATE "s"."Author" AS t SET "name" = u."name", "_version" = t."_version" + 1 "#
                + #"FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS u("_pk", "_version", "name") "#
                + #"WHERE t."_pk" = u."_pk" AND (u."_version" IS NULL OR t."_version" = u."_version") AND (SELECT count(*) FROM "_locked") >= 0 RETURNING t."_pk", t."_version""#
        )
        #expect(sql.binds.first == .int64Array([2, 1]))
    }

    @Test func mixedUniqueSavesLockExistingRowsByIdentifierFirst() {
        let sql = statements.lock(
            table: "Author", identifiers: [.string("b"), .string("a")], of: Attribute("id", .string, unique: true))
        #expect(
            sql.text
                == #"SELECT t."_pk" FROM "s"."Author" AS t WHERE t."id" = ANY($1::text[]) ORDER BY t."id" COLLATE "C" FOR NO KEY UPDATE"#
        )
        #expect(sql.binds == [.array(.string, [.string("b"), .string("a")])])
    }

    @Test func rowsWrittenUnlessCurrentAreCheckedByTheirVersionsWithoutLockingThem() {
        let sql = statements.versions(table: "Author", keys: [2, 1])
        #expect(
            sql.text
                == #"SELECT t."_pk", t."_version" FROM "s"."Author" AS t WHERE t."_pk" = ANY($1::bigint[]) AND t."_pk" BETWEEN $2 AND $3"#
        )
        #expect(sql.binds == [.int64Array([2, 1]), .int64(1), .int64(2)])
    }

    @Test func updatesCheckVersionsAndKeepUnsetColumns() {
        let partial = ColumnValues(
            name: "nickname", type: .string, values: [.string("n"), .null], isSet: [true, false])
        let sql = statements.update(table: "Car", keys: [1, 2], versions: [3, nil], columns: [name, partial])
        #expect(
            sql.text
                == #"UPDATE "s"."Car" AS t SET "name" = u."name", "nickname" = CASE WHEN u."_s1" THEN u."nickname" ELSE t."nickname" END, "_version" = t."_version" + 1 "#
                + #"FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::boolean[]) AS u("_pk", "_version", "name", "nickname", "_s1") "#
                + #"WHERE t."_pk" = u."_pk" AND (u."_version" IS NULL OR t."_version" = u."_version") RETURNING t."_pk", t."_version""#
        )
        #expect(
            sql.binds == [
                .int64Array([1, 2]), .optionalInt64Array([3, nil]), .array(.string, name.values),
                .array(.string, [.string("n"), .null]), .boolArray([true, false]),
            ])
    }

    @Test func deletesCheckVersions() {
        let sql = statements.delete(from: "Car", keys: [5], versions: [2])
        #expect(
            sql.text
                == #"DELETE FROM "s"."Car" AS t USING unnest($1::bigint[], $2::bigint[]) AS d("_pk", "_version") WHERE t."_pk" = d."_pk" AND (d."_version" IS NULL OR t."_version" = d."_version") RETURNING t."_pk""#
        )
    }

    @Test func joinTablesAreRewrittenByDiff() {
        let pairs: [(owner: Int64, member: Int64)] = [(1, 10), (1, 11)]
        let unlink = statements.unlink(joinTable: "Company_employees", owners: [1], pairs: pairs, detachMembers: true)
        #expect(
            unlink.text
                == #"DELETE FROM "s"."Company_employees" AS j WHERE (j."owner" = ANY($1::bigint[]) OR j."member" = ANY($2::bigint[])) AND NOT EXISTS ("#
                + #"SELECT 1 FROM unnest($3::bigint[], $4::bigint[]) AS n("owner", "member") WHERE n."owner" = j."owner" AND n."member" = j."member")"#
        )
        let ordered = statements.link(joinTable: "Company_employees", pairs: pairs, positions: [0, 1])
        #expect(
            ordered.text
                == #"INSERT INTO "s"."Company_employees" AS j ("owner", "member", "position") SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::integer[]) "#
                + #"ON CONFLICT ("owner", "member") DO UPDATE SET "position" = EXCLUDED."position" WHERE j."position" <> EXCLUDED."position""#
        )
        #expect(
            ordered.binds == [.int64Array([1, 1]), .int64Array([10, 11]), .array(.int32, [.int32(0), .int32(1)])])
        let unordered = statements.link(joinTable: "Shop_products", pairs: pairs, positions: nil)
        #expect(
            unordered.text
                == #"INSERT INTO "s"."Shop_products" AS j ("owner", "member") SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT ("owner", "member") DO NOTHING"#
        )
        // Owners inserted by the same transaction: no join row can name them yet.
        let new = statements.link(joinTable: "Company_employees", pairs: pairs, positions: [0, 1], newOwners: true)
        #expect(
            new.text
                == #"INSERT INTO "s"."Company_employees" AS j ("owner", "member", "position") SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::integer[])"#
        )
        #expect(new.binds == ordered.binds)
        let newUnordered = statements.link(joinTable: "Shop_products", pairs: pairs, positions: nil, newOwners: true)
        #expect(!newUnordered.text.contains("ON CONFLICT"))
    }

    @Test func bindCountDoesNotGrowWithRows() {
        let many = ColumnValues(name: "name", type: .string, values: Array(repeating: .string("x"), count: 100_000))
        #expect(statements.insert(into: "Car", columns: [many], rowCount: 100_000).binds.count == 1)
    }
}

@Suite struct SavePlanTests {
    /// Runs of rows of one entity and shape share the previous row's group without a group key; every other
    /// row finds its group by key. Either way a group holds exactly the rows that set the same columns.
    @Test func insertGroupsDependOnEntityUpsertKeyAndColumnsWhateverTheOrder() throws {
        let model = try ManagedObjectModel([
            Entity("Item") {
                Attribute("code", .int64, unique: true)
                Attribute("label", .string, optional: true)
                Relationship("parent", to: "Other")
            },
            Entity("Other") { Attribute("name", .string) },
        ])
        let mapping = SchemaMapping(model: model)
        func item(_ code: Int64, label: Bool = true, parent: ManagedObjectID? = nil) -> ObjectChange {
            var values: AttributeValues = ["code": .int64(code)]
            if label { values["label"] = .string("l\(code)") }
            return ObjectChange(
                id: .temporary("Item"), attributes: values, toOne: parent.map { ["parent": $0] } ?? [:],
                upsertKey: "code")
        }
        let other = ObjectChange(id: .temporary("Other"), attributes: ["name": .string("o")])
        let parent = ManagedObjectID.permanent("Other", 7)
        let changes = [
            item(1), item(2, label: false), item(3), other, other, item(4), item(5, label: false),
            item(6, parent: parent), item(7), other, item(8, parent: parent), item(9), item(10), item(11),
        ]
        let plan = SavePlan(
            mapping: mapping, changes: try ChangeSet(inserts: changes).resolved(against: ModelIndex(model)))
        let groups = plan.inserts.map { group in
            let codes = group.rows.map { row in row.attributes["code"].map { "\($0)" } ?? "-" }
            return "\(group.entity.name) \(group.upsertKey?.name ?? "-") "
                + "\(group.rows.first.map { $0.attributes.keys.sorted() + $0.toOne.keys.sorted() } ?? []) \(codes)"
        }
        #expect(
            groups.sorted() == [
                #"Item code ["code", "label", "parent"] ["int64(6)", "int64(8)"]"#,
                #"Item code ["code", "label"] ["int64(1)", "int64(3)", "int64(4)", "int64(7)", "int64(9)", "int64(10)", "int64(11)"]"#,
                #"Item code ["code"] ["int64(2)", "int64(5)"]"#,
                #"Other - ["name"] ["-", "-", "-"]"#,
            ])
        // Every row of a group sets the same columns.
        for group in plan.inserts {
            let shapes = Set(group.rows.map { $0.attributes.keys.sorted() + ["|"] + $0.toOne.keys.sorted() })
            #expect(shapes.count == 1, "\(group.entity.name): \(shapes)")
        }
    }

    @Test func aLaterListOfTheSameOwnerReplacesTheEarlierOne() throws {
        let model = try ExampleModel.make()
        let mapping = SchemaMapping(model: model)
        let (a, b) = (ManagedObjectID.permanent("Company", 1), ManagedObjectID.permanent("Company", 2))
        let employees = (1...3).map { ManagedObjectID.permanent("Employee", Int64($0)) }
        let plan = SavePlan(
            mapping: mapping,
            changes: try ChangeSet(relationships: [
                RelationshipChange(owner: a, relationship: "employees", members: [employees[0]]),
                RelationshipChange(owner: b, relationship: "employees", members: [employees[1]]),
                RelationshipChange(owner: a, relationship: "employees", members: [employees[2]]),
            ]).resolved(against: ModelIndex(model)))
        let changes = try #require(plan.links.first?.changes)
        #expect(changes.map(\.owner) == [a, b])
        #expect(changes.map(\.members) == [[employees[2]], [employees[1]]])
    }
}
