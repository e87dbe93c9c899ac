@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import CoreValueTesting
import Foundation
import Testing

/// A persistent struct is checked against the version it was read at wherever it is saved: its `objectID`
/// carries that version. An outside review found a struct read in one context and saved through a fresh one
/// (one context per request) overwriting another writer's save without a conflict.
@Suite struct StaleStructSaveTests {
    struct Account: CVManagedPersistentStruct, Equatable, Codable {
        static let EntityName = "Account"
        var objectID: ManagedObjectID?
        var name: String
        var balance: Int64
        static func fromObject(_ o: ManagedObject) throws -> Account {
            try curry(self.init) <^> o <|? "objectID" <^> o <| "name" <^> o <| "balance"
        }
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel([
            Entity("Account", attributes: [Attribute("name", .string), Attribute("balance", .int64)])
        ])
    }

    static func onBothStores(_ function: String = #function, _ body: (any Store) throws -> Void) throws {
        try TestDatabase.onBothStores(model: try model(), function, body)
    }

    static func balance(_ store: any Store) throws -> Int64? {
        let all: [Account] = try Account.query(ManagedObjectContext(store: store), predicate: nil)
        return all.first?.balance
    }

    static func isConflict(_ error: any Error) -> Bool {
        (error as? CVManagedStructError)?.code == .conflict
    }

    /// The one account, read in a context of its own.
    static func readOne(_ store: any Store, in context: ManagedObjectContext? = nil) throws -> Account {
        let all: [Account] = try Account.query(context ?? ManagedObjectContext(store: store), predicate: nil)
        return try #require(all.first)
    }

    @Test func aStructReadBeforeAnotherSaveConflictsThroughAFreshContext() throws {
        try Self.onBothStores { (store: any Store) throws in
            var account = Account(name: "a", balance: 100)
            try account.save(ManagedObjectContext(store: store))
            var first = try Self.readOne(store)
            var second = try Self.readOne(store)
            #expect(first.objectID?.version != nil)
            first.balance += 10
            try first.save(ManagedObjectContext(store: store))
            second.balance += 5
            #expect { try second.save(ManagedObjectContext(store: store)) } throws: { Self.isConflict($0) }
            #expect(try Self.balance(store) == 110)
            // Read again, it saves.
            var fresh = try Self.readOne(store)
            fresh.balance += 5
            try fresh.save(ManagedObjectContext(store: store))
            #expect(try Self.balance(store) == 115)
        }
    }

    @Test func aStructSavedAgainAfterItsOwnSaveDoesNotConflict() throws {
        try Self.onBothStores { (store: any Store) throws in
            var account = Account(name: "a", balance: 0)
            try account.save(ManagedObjectContext(store: store))
            for _ in 0..<3 {
                account.balance += 1
                // Its own save hands back the new version with the objectID.
                try account.save(ManagedObjectContext(store: store))
            }
            var all = [account]
            all[0].balance += 1
            try all.saveAll(ManagedObjectContext(store: store))
            all[0].balance += 1
            try all.saveAll(ManagedObjectContext(store: store))
            #expect(try Self.balance(store) == 5)
        }
    }

    @Test func theVersionTravelsWithAnEncodedStruct() throws {
        try Self.onBothStores { (store: any Store) throws in
            var account = Account(name: "a", balance: 1)
            try account.save(ManagedObjectContext(store: store))
            let read = try Self.readOne(store)
            // Sent to a client and back while another writer saved.
            let sent = try JSONEncoder().encode(read)
            var other = read
            other.balance = 2
            try other.save(ManagedObjectContext(store: store))
            var back = try JSONDecoder().decode(Account.self, from: sent)
            #expect(back.objectID == read.objectID)
            #expect(back.objectID?.version == read.objectID?.version)
            back.balance = 3
            #expect { try back.save(ManagedObjectContext(store: store)) } throws: { Self.isConflict($0) }
            #expect(try Self.balance(store) == 2)
        }
    }

    @Test func theVersionIsNoPartOfTheIdentity() throws {
        let id = ManagedObjectID.permanent("Account", 7)
        let read = id.read(at: 3)
        #expect(read == id)
        #expect(read.hashValue == id.hashValue)
        #expect(Set([id, read]).count == 1)
        // An ID encoded before IDs carried a version decodes without one.
        let old = try JSONDecoder().decode(
            ManagedObjectID.self, from: Data(#"{"entityName":"Account","key":{"permanent":{"_0":7}}}"#.utf8))
        #expect(old == id)
        #expect(old.version == nil)
    }

    /// Saves the account once, then has another writer set its balance: returns the struct as read before.
    static func staleAccount(_ store: any Store, otherBalance: Int64) throws -> Account {
        var account = Account(name: "a", balance: 100)
        try account.save(ManagedObjectContext(store: store))
        let stale = try readOne(store)
        var other = try readOne(store)
        other.balance = otherBalance
        try other.save(ManagedObjectContext(store: store))
        return stale
    }

    @Test func aStaleStructThatWritesNothingGetsTheCurrentVersionBack() throws {
        try Self.onBothStores { (store: any Store) throws in
            var stale = try Self.staleAccount(store, otherBalance: 110)
            // The same values as stored now: nothing is written, and nothing is overwritten.
            stale.balance = 110
            try stale.save(ManagedObjectContext(store: store))
            #expect(stale.objectID?.version == (try Self.readOne(store)).objectID?.version)
            stale.balance += 1
            try stale.save(ManagedObjectContext(store: store))
            #expect(try Self.balance(store) == 111)
        }
    }

    @Test func aStaleDeleteConflicts() throws {
        try Self.onBothStores { (store: any Store) throws in
            var stale = try Self.staleAccount(store, otherBalance: 110)
            #expect { try stale.delete(ManagedObjectContext(store: store)) } throws: { error in
                // A struct's delete wraps what the save threw.
                "\(error)".contains("conflict")
            }
            #expect(try Self.balance(store) == 110)
        }
    }

    @Test func aStaleStructMergesOnlyUnderPoliciesThatTakeOneSideWhole() throws {
        try Self.onBothStores { (store: any Store) throws in
            for (policy, expected) in [
                (MergePolicy.mergeByPropertyStoreTrump, nil), (.mergeByPropertyObjectTrump, nil),
                (.overwrite, Int64(105)), (.rollback, Int64(110)),
            ] {
                var stale = try Self.staleAccount(store, otherBalance: 110)
                stale.balance += 5
                let context = ManagedObjectContext(store: store)
                context.mergePolicy = policy
                if let expected {
                    try stale.save(context)
                    #expect(try Self.balance(store) == expected, "\(policy)")
                } else {
                    #expect(throws: CVManagedStructError.self, "\(policy)") { try stale.save(context) }
                    #expect(try Self.balance(store) == 110, "\(policy)")
                }
                var all: [Account] = try Account.query(ManagedObjectContext(store: store), predicate: nil)
                for index in all.indices { _ = try all[index].delete(ManagedObjectContext(store: store)) }
            }
        }
    }

    @Test func aContextThatOnlyReadTheObjectChecksTheStructsVersion() throws {
        try Self.onBothStores { (store: any Store) throws in
            let stale = try Self.staleAccount(store, otherBalance: 110)
            // A request's context lists the rows (reading the newer version), then saves what a client sent back.
            let context = ManagedObjectContext(store: store)
            _ = try Self.readOne(store, in: context)
            var sentBack = stale
            sentBack.balance = 1
            #expect { try sentBack.save(context) } throws: { Self.isConflict($0) }
            #expect(try Self.balance(store) == 110)
        }
    }

    @Test func anIDIsNoLargerForItsVersion() {
        // The version sits in the bytes the key's case leaves free: 40 bytes, as before IDs carried one.
        #expect(MemoryLayout<ManagedObjectID>.stride == 40)
        #expect(MemoryLayout<ManagedObjectID?>.stride == 40)
        let id = ManagedObjectID.permanent("Account", 1)
        #expect(id.read(at: 0).version == 0)
        #expect(id.read(at: Int64(UInt32.max) - 1).version == Int64(UInt32.max) - 1)
        // Beyond what an ID carries, none: the saving context checks what it read, as before.
        #expect(id.read(at: Int64(UInt32.max)).version == nil)
        #expect(id.read(at: -1).version == nil)
        #expect(id.read(at: 5).read(at: nil).version == nil)
    }

    @Test func aContextThatHoldsTheObjectChecksItsOwnVersion() throws {
        try Self.onBothStores { (store: any Store) throws in
            var account = Account(name: "a", balance: 0)
            try account.save(ManagedObjectContext(store: store))
            let context = ManagedObjectContext(store: store)
            var mine = try Self.readOne(store, in: context)
            // Saved through the context that read it, twice, the struct's own version going stale after the
            // first: the context checks against what it holds.
            mine.balance = 1
            _ = try mine.toObject(context)
            try context.save()
            mine.balance = 2
            _ = try mine.toObject(context)
            try context.save()
            #expect(try Self.balance(store) == 2)
            // Read again in the same context at the version its own save gave: still this context's own.
            _ = try Self.readOne(store, in: context)
            mine.balance = 3
            _ = try mine.toObject(context)
            try context.save()
            #expect(try Self.balance(store) == 3)
        }
    }
}
