@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import Testing

@testable import CoreValuePostgres

/// The SQL typed predicates become: values bound, identifiers quoted, one bind for a whole array,
/// relationships as `EXISTS`.
@Suite struct TypedQuerySQLTests {
    let statements = FetchStatements(mapping: SchemaMapping(model: ExampleModel.model), schema: "s")

    func whereClause<T: BoxingStruct & UnboxingStruct>(_ predicate: Predicate<T>) throws -> (
        text: String, binds: [SQLBind]
    )
    where T.StructureType == T {
        let request = try T.fetchRequest(ExampleModel.model, predicate: predicate).validated(in: ExampleModel.model)
        let sql = try statements.rows(for: request)
        let text = sql.text
        // The statement's own WHERE, after its table (the select list reads relationships with WHEREs of
        // their own).
        let start = try #require(text.range(of: " AS t WHERE "))
        // An unsorted request has no ORDER BY of its own (the select list's key arrays order by "j.").
        let end = text.range(of: " ORDER BY t.", options: .backwards)?.lowerBound ?? text.endIndex
        return (String(text[start.upperBound..<end]), sql.binds)
    }

    @Test func anArrayOfValuesIsOneBind() throws {
        let names = (0..<500).map { "N\($0)" }
        let sql = try whereClause(#Predicate<Employee> { names.contains($0.name) })
        #expect(sql.text == #"t."name" = ANY($1::text[])"#)
        #expect(sql.binds.count == 1)
    }

    @Test func anOptionalAttributeComparesAsSwiftDoes() throws {
        let sql = try whereClause(#Predicate<Employee> { $0.position != "Lead" })
        #expect(sql.text == #"NOT ((NOT (t."position" IS NULL) AND t."position" = $1))"#)
        let hostile = "x'); DROP TABLE \"Employee\"; --"
        let bound = try whereClause(#Predicate<Employee> { $0.name == hostile })
        #expect(bound.text == #"t."name" = $1"#)
    }

    @Test func relationshipsBecomeExists() throws {
        let toOne = try whereClause(#Predicate<Article> { $0.author?.name == "Ann" })
        // Article.author is read from the join table of its inverse, Author.articles.
        #expect(
            toOne.text == #"EXISTS (SELECT 1 FROM "s"."Author_articles" AS tj JOIN "s"."Author" AS tr ON tr."_pk" = "#
                + #"tj."owner" WHERE tj."member" = t."_pk" AND tr."name" = $1)"#)
        let toMany = try whereClause(#Predicate<Company> { $0.employees.contains { $0.age > 60 } })
        #expect(
            toMany.text
                == #"EXISTS (SELECT 1 FROM "s"."Company_employees" AS tj JOIN "s"."Employee" AS tr ON tr."_pk" = "#
                + #"tj."member" WHERE tj."owner" = t."_pk" AND tr."age" > $1)"#)
        // Nested levels extend the alias, so an inner subquery never shadows an outer one.
        let nested = try whereClause(
            #Predicate<Article> { $0.categories.contains { $0.name == "Tech" } && $0.author?.name == "Ann" })
        #expect(nested.text.contains(#"AS tr "#) && nested.binds.count == 2)
    }
}
