import Foundation
@testable import CoreValuePostgres
import Testing

/// The commit identifier's own pieces: its layout, and the statement that carries a one-row save's `COMMIT`
/// built once per shape and sent again with each attempt's identifier.
@Suite struct CommitMarkerTests {
    let table = SQLIdentifier("_corevalue_commits", schema: "s")

    /// A one-row `UPDATE` as the write statements keep it: rendered once, returning a table's columns.
    func keptUpdate(key: Int64) -> SQL {
        let update: SQL =
            "UPDATE \"s\".\"T\" AS t SET \"n\" = \(typedBind: .int64(key)) WHERE t.\"_pk\" = \(bind: .int64(key)) "
            + "RETURNING t.\"_pk\", t.\"_version\""
        return update.returning(["_pk", "_version"], of: SQLIdentifier("T", schema: "s")).renderedOnce()
    }

    @Test func identifiersAreVersion7WithTheTimeFirstAndTheMillisecondsFractionNext() {
        // Half a millisecond past 1_700_000_000.123 s.
        let now = Date(timeIntervalSince1970: 1_700_000_000.1235)
        let ids = (0..<64).map { _ in CommitMarker.timeOrderedID(now: now) }
        for id in ids {
            let u = id.uuid
            let milliseconds = [u.0, u.1, u.2, u.3, u.4, u.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(milliseconds == 1_700_000_000_123)
            #expect(u.6 >> 4 == 7)
            #expect(u.8 >> 6 == 0b10)
            // Half of 4,096 (a microsecond either way: the time is a Double).
            let fraction = Int(u.6 & 0x0F) << 8 | Int(u.7)
            #expect((2040...2052).contains(fraction))
        }
        // 62 random bits: 64 identifiers made in the same microsecond all differ.
        #expect(Set(ids).count == ids.count)
        let later = CommitMarker.timeOrderedID(now: now.addingTimeInterval(0.0002))
        #expect(later.uuidString > ids[0].uuidString)
    }

    @Test func theCarryingStatementIsBuiltOncePerShapeAndBindsEachAttemptsIdentifier() throws {
        let templates = StatementTemplates<CommitMarker.CarryShape>()
        let first = CommitMarker(table: table, templates: templates)
        let second = CommitMarker(table: table, templates: templates)
        let a = try #require(first.carrying(keptUpdate(key: 1)))
        let b = try #require(second.carrying(keptUpdate(key: 2)))
        let built = try #require(CommitMarker(table: table).carrying(keptUpdate(key: 3)))
        #expect(a.text == built.text)
        #expect(b.text == a.text)
        #expect(b.keptText != nil)
        #expect(
            a.text
                == #"WITH w AS (UPDATE "s"."T" AS t SET "n" = $1::bigint WHERE t."_pk" = $2 RETURNING t."_pk", t."_version"), "#
                + #"m AS (INSERT INTO "s"."_corevalue_commits" (id, at, result) SELECT $3::uuid, now(), (SELECT jsonb_agg(w) FROM w) "#
                + #"FROM pg_advisory_xact_lock($4::bigint)) SELECT * FROM w"#)
        #expect(a.binds == [.int64(1), .int64(1), .scalar(.uuid, .uuid(first.id)), .int64(first.lockKey)])
        #expect(b.binds == [.int64(2), .int64(2), .scalar(.uuid, .uuid(second.id)), .int64(second.lockKey)])
        #expect(first.state == .sent)
    }

    @Test func aRowSentEarlierIsUpdatedByItsOwnShape() throws {
        let templates = StatementTemplates<CommitMarker.CarryShape>()
        let marker = CommitMarker(table: table, templates: templates)
        _ = marker.insert()
        let carrying = try #require(marker.carrying(keptUpdate(key: 5)))
        #expect(
            carrying.text.contains(
                #"m AS (UPDATE "s"."_corevalue_commits" SET result = (SELECT jsonb_agg(w) FROM w) WHERE id = $3::uuid)"#
            ))
        #expect(carrying.binds == [.int64(5), .int64(5), .scalar(.uuid, .uuid(marker.id))])
        let inserting = try #require(CommitMarker(table: table, templates: templates).carrying(keptUpdate(key: 6)))
        #expect(inserting.text.contains("pg_advisory_xact_lock"))
    }

    @Test func aStatementReturningOneRowAtMostKeepsItWithoutAnAggregate() throws {
        let templates = StatementTemplates<CommitMarker.CarryShape>()
        let update = keptUpdate(key: 7)
        let one = update.returning(["_pk", "_version"], of: SQLIdentifier("T", schema: "s"), atMostOne: true)
        let carrying = try #require(CommitMarker(table: table, templates: templates).carrying(one))
        #expect(carrying.text.contains("SELECT $3::uuid, now(), (SELECT jsonb_build_array(to_jsonb(w)) FROM w) "))
        // The same text noted as returning any number of rows is a shape of its own.
        let many = try #require(CommitMarker(table: table, templates: templates).carrying(update))
        #expect(many.text.contains("(SELECT jsonb_agg(w) FROM w)"))
    }

    @Test func aStatementReturningNoTableRowsCarriesNothing() {
        let marker = CommitMarker(table: table, templates: StatementTemplates<CommitMarker.CarryShape>())
        #expect(marker.carrying("DELETE FROM \"s\".\"T\"") == nil)
        #expect(marker.state == .pending)
    }
}
