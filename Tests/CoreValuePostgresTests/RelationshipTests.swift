@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import Testing

@Suite struct RelationshipTests {
    static func employee(_ name: String) -> ObjectChange {
        ObjectChange(
            id: .temporary("Employee"),
            attributes: [
                "name": .string(name), "age": .int16(30), "department": .string("D"), "job": .string("J"),
            ])
    }

    /// Inserts a company with employees (ordered) and returns their permanent IDs.
    static func company(_ store: PostgresStore, employees names: [String]) throws -> (
        ManagedObjectID, [ManagedObjectID]
    ) {
        let company = ObjectChange(id: .temporary("Company"), attributes: ["name": .string("ACME")])
        let employees = names.map(employee)
        let result = try store.apply(
            ChangeSet(
                inserts: [company] + employees,
                relationships: [
                    RelationshipChange(owner: company.id, relationship: "employees", members: employees.map(\.id))
                ]))
        let companyID = try #require(result.permanentIDs[company.id])
        return (companyID, try employees.map { try #require(result.permanentIDs[$0.id]) })
    }

    func members(_ store: PostgresStore, _ id: ManagedObjectID, _ key: String) throws -> [Int64] {
        try #require(try store.fetch(ids: [id]).first?.toMany[key])
    }

    @Test func orderedToManyKeepsOrderThroughReorderInsertAndRemove() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let (company, employees) = try Self.company(store, employees: ["a", "b", "c"])
            let keys = employees.compactMap(\.primaryKey)
            #expect(try members(store, company, "employees") == keys)

            let reordered = [employees[2], employees[0], employees[1]]
            _ = try store.apply(
                ChangeSet(relationships: [
                    RelationshipChange(owner: company, relationship: "employees", members: reordered)
                ]))
            #expect(try members(store, company, "employees") == reordered.compactMap(\.primaryKey))

            let newcomer = Self.employee("d")
            let inserted = try store.apply(
                ChangeSet(
                    inserts: [newcomer],
                    relationships: [
                        RelationshipChange(
                            owner: company, relationship: "employees",
                            members: [employees[2], newcomer.id, employees[1]])
                    ]))
            let newKey = try #require(inserted.permanentIDs[newcomer.id]?.primaryKey)
            #expect(try members(store, company, "employees") == [keys[2], newKey, keys[1]])

            // The inverse to-one reads the same join table.
            let rows = try store.fetch(
                FetchRequest(entityName: "Employee", sortDescriptors: [CVSortDescriptor(key: "name")]))
            #expect(
                rows.map { $0.toOne["company"] ?? nil } == [
                    nil, company.primaryKey, company.primaryKey, company.primaryKey,
                ])

            _ = try store.apply(
                ChangeSet(relationships: [RelationshipChange(owner: company, relationship: "employees", members: [])]))
            #expect(try members(store, company, "employees") == [])
            // Unlinked, not deleted.
            #expect(try store.fetch(FetchRequest(entityName: "Employee")).count == 4)
        }
    }

    /// A context loads a relationship's members through its join table, in one statement. Members it holds
    /// keys for that the relationship no longer links (another writer's change since the owner was read) are
    /// still loaded, by ID, and a member linked since is not: the members are the ones the owner was read with.
    @Test func membersAreLoadedThroughTheJoinTableAsTheOwnerWasRead() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let (company, employees) = try Self.company(store, employees: ["a", "b", "c"])
            let first = ManagedObjectContext(store: store)
            let fresh = try first.existingObject(with: company)
            var before = store.statistics
            #expect(try fresh.objects(forKey: "employees").map(\.objectID) == employees)
            #expect(store.statistics.since(before).statements == 1)

            let context = ManagedObjectContext(store: store)
            let owner = try context.existingObject(with: company)
            // Another writer links "d" and unlinks "b" after the owner was read.
            let newcomer = Self.employee("d")
            _ = try store.apply(
                ChangeSet(
                    inserts: [newcomer],
                    relationships: [
                        RelationshipChange(
                            owner: company, relationship: "employees",
                            members: [employees[0], newcomer.id, employees[2]])
                    ]))
            before = store.statistics
            #expect(try owner.objects(forKey: "employees").map(\.objectID) == employees)
            // Through the join table ("a", "c"), then "b" by ID.
            #expect(store.statistics.since(before).statements == 2)
            #expect(context.registeredObjects(entityName: "Employee").count == 3)
        }
    }

    @Test func aMemberMovedToAnotherOwnerLeavesTheOldOne() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let (first, employees) = try Self.company(store, employees: ["a", "b"])
            let (second, _) = try Self.company(store, employees: [])
            _ = try store.apply(
                ChangeSet(relationships: [
                    RelationshipChange(owner: second, relationship: "employees", members: [employees[0]])
                ]))
            #expect(try members(store, first, "employees") == [employees[1].primaryKey].compactMap { $0 })
            #expect(try members(store, second, "employees") == [employees[0].primaryKey].compactMap { $0 })
        }
    }

    @Test func unorderedToManyAndForeignKeyToOne() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let owner = Self.employee("owner")
            let products = (1...3).map { index in
                ObjectChange(
                    id: .temporary("Product"),
                    attributes: ["id": .int32(Int32(index)), "name": .string("P"), "price": .decimal(1)])
            }
            // The shop is inserted before its owner in the change set: the foreign key is linked afterwards.
            let shop = ObjectChange(
                id: .temporary("Shop"), attributes: ["name": .string("S")], toOne: ["owner": owner.id])
            let result = try store.apply(
                ChangeSet(
                    inserts: [shop, owner] + products,
                    relationships: [
                        RelationshipChange(owner: shop.id, relationship: "products", members: products.map(\.id))
                    ]))
            let shopID = try #require(result.permanentIDs[shop.id])
            let ownerKey = try #require(result.permanentIDs[owner.id]?.primaryKey)
            let productKeys = Set(products.compactMap { result.permanentIDs[$0.id]?.primaryKey })
            var row = try #require(try store.fetch(ids: [shopID]).first)
            #expect(row.toOne["owner"] == .some(ownerKey))
            #expect(Set(row.toMany["products"] ?? []) == productKeys)

            let kept = Array(products.compactMap { result.permanentIDs[$0.id] }.prefix(1))
            _ = try store.apply(
                ChangeSet(
                    updates: [ObjectChange(id: shopID, version: 1, attributes: [:], toOne: ["owner": nil])],
                    relationships: [RelationshipChange(owner: shopID, relationship: "products", members: kept)]))
            row = try #require(try store.fetch(ids: [shopID]).first)
            #expect(row.toOne["owner"] == .some(nil))
            #expect(row.toMany["products"] == kept.compactMap(\.primaryKey))
            #expect(row.version == 2)
            let orphans = try store.fetch(FetchRequest(entityName: "Shop", predicate: .isNull(key: "owner")))
            #expect(orphans.count == 1)
        }
    }

    @Test func deletingAnOwnerFollowsTheDeleteRule() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            let owner = Self.employee("owner")
            let shop = ObjectChange(
                id: .temporary("Shop"), attributes: ["name": .string("S")], toOne: ["owner": owner.id])
            let result = try store.apply(ChangeSet(inserts: [owner, shop]))
            let ownerID = try #require(result.permanentIDs[owner.id])
            _ = try store.apply(ChangeSet(deletes: [ObjectDeletion(id: ownerID, version: nil)]))
            let shops = try store.fetch(FetchRequest(entityName: "Shop"))
            #expect(shops.count == 1)
            #expect(shops.first?.toOne["owner"] == .some(nil))
        }
    }
}
