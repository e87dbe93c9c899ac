import Bookmarks
import CoreValue
import CoreValueTesting
import Foundation
import Testing

/// Runs with `swift test` and nothing before it: without DATABASE_URL, CoreValueTesting starts a throwaway
/// PostgreSQL server for this process and removes it afterwards.
@Suite struct BookmarkTests {
    @Test func aBookmarkSavedTwiceIsOneRow() async throws {
        try await TestSchema.with(model: Bookmark.model()) { schema in
            let url = try #require(URL(string: "https://swift.org/"))
            try await Bookmark(url: url, title: "Swift").save(ManagedObjectContext(store: schema.store))
            try await Bookmark(url: url, title: "Swift.org", visits: 2).save(ManagedObjectContext(store: schema.store))
            let all: [Bookmark] = try await Bookmark.query(ManagedObjectContext(store: schema.store), predicate: nil)
            #expect(all == [Bookmark(url: url, title: "Swift.org", visits: 2)])
        }
    }

    @Test func schemasOfTwoTestsAreApart() throws {
        try TestSchema.with(model: Bookmark.model()) { schema in
            let all: [Bookmark] = try Bookmark.query(ManagedObjectContext(store: schema.store), predicate: nil)
            #expect(all.isEmpty)
        }
    }
}
