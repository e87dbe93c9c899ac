@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

@testable import CoreValuePostgres

@Suite struct FetchSQLTests {
    let statements = FetchStatements(mapping: SchemaMapping(model: ExampleModel.model), schema: "s")
    static let carColumns =
        #"SELECT t."_pk", t."_version", t."name"::text, t."kind"::text, t."doors"::integer, t."mileage"::bigint, "#
        + #"t."seats"::smallint, t."weight"::real, t."power"::double precision, t."registered"::boolean, "#
        + #"t."price"::numeric, t."builtAt"::timestamptz, t."vin"::uuid, t."photo"::bytea, t."nickname"::text "#
        + #"FROM "s"."Car" AS t"#

    func sql(_ predicate: CVPredicate?, sort: [CVSortDescriptor] = [], limit: Int? = nil, offset: Int = 0) throws
        -> SQL
    {
        try statements.rows(
            for: FetchRequest(
                entityName: "Car", predicate: predicate, sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset))
    }

    @Test func selectsEveryColumnUnsortedWithoutSortOrWindow() throws {
        let sql = try sql(nil)
        #expect(sql.text == Self.carColumns)
        #expect(sql.binds.isEmpty)
    }

    @Test func aSortOrAWindowEndsWithTheKey() throws {
        #expect(
            try sql(nil, sort: [CVSortDescriptor(key: "name")]).text
                == Self.carColumns + #" ORDER BY t."name" ASC, t."_pk" ASC"#)
        // A window without sort descriptors is still stable from page to page.
        #expect(try sql(nil, limit: 5).text == Self.carColumns + #" ORDER BY t."_pk" ASC LIMIT $1"#)
        #expect(try sql(nil, offset: 5).text == Self.carColumns + #" ORDER BY t."_pk" ASC OFFSET $1"#)
    }

    @Test func comparesWithCoercedBinds() throws {
        let sql = try sql(
            .and([
                .comparison(key: "doors", .greaterThanOrEqual, .int64(4)),
                .comparison(key: "power", .lessThan, .int32(300)),
            ]),
            sort: [CVSortDescriptor(key: "name", ascending: false)], limit: 10, offset: 20)
        #expect(
            sql.text == Self.carColumns
                + #" WHERE (t."doors" >= $1 AND t."power" < $2) ORDER BY t."name" DESC, t."_pk" ASC LIMIT $3 OFFSET $4"#
        )
        #expect(sql.binds == [.scalar(.int32, .int32(4)), .scalar(.double, .double(300)), .int64(10), .int64(20)])
    }

    /// A read by one attribute is built once per attribute and operator, then sent with the new value: the
    /// same text as the compiler's, the value coerced and bound, and a null still read as `IS NULL`.
    @Test func aReadByOneAttributeReusesItsTextWithTheNewValue() throws {
        let first = try sql(.comparison(key: "doors", .equal, .int64(4)))
        let second = try sql(.comparison(key: "doors", .equal, .int16(2)))
        #expect(first.text == Self.carColumns + #" WHERE t."doors" = $1"#)
        #expect(second.text == first.text)
        #expect(first.binds == [.scalar(.int32, .int32(4))])
        #expect(second.binds == [.scalar(.int32, .int32(2))])
        #expect(try sql(.comparison(key: "doors", .greaterThan, .int64(4))).text.hasSuffix(#"t."doors" > $1"#))
        #expect(try sql(.comparison(key: "doors", .equal, .null)).text.hasSuffix(#"t."doors" IS NULL"#))
        #expect(try sql(.comparison(key: "doors", .equal, .int64(5)), limit: 1).text.hasSuffix("LIMIT $2"))
        #expect(throws: CVManagedStructError.self) { try sql(.comparison(key: "doors", .equal, .string("four"))) }
        #expect(throws: (any Error).self) { try sql(.comparison(key: "name", .equal, .string("a\u{0}b"))) }
    }

    /// An aggregate is one statement: typed group columns, the function, the predicate, groups in order.
    @Test func anAggregateIsOneGroupedStatement() throws {
        let entity = try ExampleModel.model.entity("Car")
        let request = AggregateRequest(
            entityName: "Car", .sum, of: "mileage", predicate: .key("doors") >= Int64(4), groupedBy: ["kind"])
        let sql = try statements.aggregate(request, entity: entity, resultType: try request.resultType(in: entity))
        #expect(
            sql.text
                == #"SELECT t."kind"::text, sum(t."mileage"::numeric)::bigint FROM "s"."Car" AS t WHERE t."doors" >= $1 "#
                + #"GROUP BY t."kind" ORDER BY t."kind""#)
        let rows = AggregateRequest(entityName: "Car", .countRows, of: nil)
        #expect(
            try statements.aggregate(rows, entity: entity, resultType: .int64).text
                == #"SELECT count(*) FROM "s"."Car" AS t"#)
    }

    @Test func compilesEveryPredicateKind() throws {
        let predicate: CVPredicate = .or([
            .isIn(key: "seats", [.int16(2), .int64(5)]),
            .between(key: "mileage", .int64(1), .int64(9)),
            .isNull(key: "nickname"),
            .comparison(key: "nickname", .equal, .null),
            .comparison(key: "nickname", .notEqual, .null),
            .not(.comparison(key: "registered", .equal, .bool(true))),
            .stringMatch(key: "name", .like, "a_%", caseInsensitive: false),
            .stringMatch(key: "name", .contains, "50%_\\", caseInsensitive: true),
            .stringMatch(key: "name", .beginsWith, "B", caseInsensitive: false),
            .stringMatch(key: "name", .endsWith, "z", caseInsensitive: true),
            .isIn(key: "seats", []), .true, .false, .and([]), .or([]),
        ])
        let sql = try sql(predicate)
        #expect(
            sql.text == Self.carColumns
                + #" WHERE (t."seats" = ANY($1::smallint[]) OR t."mileage" BETWEEN $2 AND $3 OR t."nickname" IS NULL"#
                + #" OR t."nickname" IS NULL OR t."nickname" IS NOT NULL OR NOT (t."registered" = $4)"#
                + #" OR t."name" LIKE $5 OR t."name" COLLATE "und-x-icu" ILIKE $6 OR t."name" LIKE $7 OR t."name" COLLATE "und-x-icu" ILIKE $8"#
                + #" OR FALSE OR TRUE OR FALSE OR TRUE OR FALSE)"#)
        #expect(
            sql.binds == [
                .array(.int16, [.int16(2), .int16(5)]), .scalar(.int64, .int64(1)), .scalar(.int64, .int64(9)),
                .scalar(.bool, .bool(true)), .text("a_%"), .text("%50\\%\\_\\\\%"), .text("B%"), .text("%z"),
            ])
    }

    @Test func unknownKeysAndWrongTypesThrowBeforeSQL() {
        #expect(throws: CVManagedStructError.unknownKey(entity: "Car", key: "wheels")) {
            try sql(.comparison(key: "wheels", .equal, .int64(4)))
        }
        #expect(throws: CVManagedStructError.unknownKey(entity: "Car", key: "colour")) {
            try sql(nil, sort: [CVSortDescriptor(key: "colour")])
        }
        #expect(throws: CVManagedStructError.unknownEntity("Boat")) {
            try statements.rows(for: FetchRequest(entityName: "Boat"))
        }
        #expect(
            throws: CVManagedStructError.typeMismatch(entity: "Car", key: "doors", expected: "int32", found: "string")
        ) {
            try sql(.comparison(key: "doors", .equal, .string("four")))
        }
        #expect(
            throws: CVManagedStructError.typeMismatch(entity: "Car", key: "seats", expected: "int16", found: "int64")
        ) {
            try sql(.comparison(key: "seats", .equal, .int64(70_000)))
        }
    }

    @Test func aNulCharacterIsATypedError() {
        #expect(throws: PostgresStoreError.self) {
            try sql(.comparison(key: "name", .equal, .string("a\u{0}b")))
        }
        #expect(throws: PostgresStoreError.self) {
            try sql(.stringMatch(key: "name", .contains, "\u{0}", caseInsensitive: false))
        }
    }

    @Test func toOneRelationshipsCanBeTestedForNull() throws {
        let shop = try statements.rows(for: FetchRequest(entityName: "Shop", predicate: .isNull(key: "owner")))
        #expect(shop.text.hasSuffix(#" WHERE t."owner" IS NULL"#))
        let employee = try statements.rows(
            for: FetchRequest(entityName: "Employee", predicate: .isNull(key: "company")))
        #expect(
            employee.text.hasSuffix(
                #" WHERE NOT EXISTS (SELECT 1 FROM "s"."Company_employees" AS i WHERE i."member" = t."_pk")"#
            ))
    }

    @Test func foreignKeyToOnesCompareWithKeys() throws {
        let sql = try statements.rows(
            for: FetchRequest(
                entityName: "Shop", predicate: .comparison(key: "owner", .equal, .int64(7)),
                sortDescriptors: [CVSortDescriptor(key: "owner")]))
        #expect(sql.text.hasSuffix(#" WHERE t."owner" = $1 ORDER BY t."owner" ASC, t."_pk" ASC"#))
        #expect(sql.binds == [.scalar(.int64, .int64(7))])
        #expect(throws: CVManagedStructError.self) {
            try statements.rows(
                for: FetchRequest(entityName: "Shop", predicate: .comparison(key: "owner", .lessThan, .int64(7))))
        }
        #expect(throws: CVManagedStructError.unknownKey(entity: "Company", key: "employees")) {
            try statements.rows(for: FetchRequest(entityName: "Company", predicate: .isNull(key: "employees")))
        }
    }

    @Test func rowStatementsReadTheirLinksAsKeyArrays() throws {
        let model = ExampleModel.model
        let company = try model.entity("Company")
        let employee = try model.entity("Employee")
        let shop = try model.entity("Shop")
        #expect(statements.separatelyLoaded(shop).map(\.name) == ["products"])
        // An ordered to-many: its members by position.
        #expect(
            statements.rows(of: company, primaryKeys: [1]).text.contains(
                #"ARRAY(SELECT j."member" FROM "s"."Company_employees" AS j WHERE j."owner" = t."_pk" ORDER BY j."position")"#
            ))
        // The to-one side of a one-to-many kept in the other entity's join table.
        #expect(
            statements.rows(of: employee, primaryKeys: [3]).text.contains(
                #"ARRAY(SELECT j."owner" FROM "s"."Company_employees" AS j WHERE j."member" = t."_pk" ORDER BY j."owner")"#
            ))
        let byKey = statements.rows(of: shop, primaryKeys: [7, 8])
        // A foreign key is a column of the row; an unordered to-many its members by key.
        #expect(
            byKey.text
                == #"SELECT t."_pk", t."_version", t."name"::text, t."owner", ARRAY(SELECT j."member" FROM "s"."Shop_products" AS j WHERE j."owner" = t."_pk" ORDER BY j."member") FROM "s"."Shop" AS t WHERE t."_pk" = ANY($1::bigint[]) AND t."_pk" BETWEEN $2 AND $3"#
        )
        // The keys' range too, so that the planner reads a few keys of a large table by index.
        #expect(byKey.binds == [.int64Array([7, 8]), .int64(7), .int64(8)])
        let byValue = try statements.rows(of: try model.entity("Product"), key: "id", values: [.int64(1)])
        #expect(byValue.text.hasSuffix(#"WHERE t."id" = ANY($1::integer[])"#))
        #expect(byValue.binds == [.array(.int32, [.int32(1)])])
    }

    @Test func relatedRowsAreReadThroughTheJoinTable() throws {
        let model = ExampleModel.model
        let company = try model.entity("Company")
        let employee = try model.entity("Employee")
        let shop = try model.entity("Shop")
        func relationship(_ entity: Entity, _ name: String) throws -> Relationship {
            try #require(entity.relationships.first { $0.name == name })
        }
        let members = try #require(
            try statements.related(relationship(company, "employees"), of: company, owners: [1, 2]))
        #expect(
            members.text.hasSuffix(
                #"FROM "s"."Company_employees" AS j JOIN "s"."Employee" AS t ON t."_pk" = j."member" WHERE j."owner" = ANY($1::bigint[])"#
            ))
        #expect(members.text.hasPrefix(#"SELECT t."_pk", t."_version", "#))
        #expect(members.binds == [.int64Array([1, 2])])
        // The other side of the same table: the owners of these members.
        let owners = try #require(try statements.related(relationship(employee, "company"), of: employee, owners: [3]))
        #expect(
            owners.text.hasSuffix(
                #"FROM "s"."Company_employees" AS j JOIN "s"."Company" AS t ON t."_pk" = j."owner" WHERE j."member" = ANY($1::bigint[])"#
            ))
        // A foreign key is read by ID.
        #expect(try statements.related(relationship(shop, "owner"), of: shop, owners: [1]) == nil)
    }
}
