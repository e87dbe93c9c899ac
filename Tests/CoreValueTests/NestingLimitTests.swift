@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// Deep graphs of nested structs and related objects: refused with a typed error at
/// `ManagedObjectContext.maximumGraphDepth`, on a thread whose stack holds that many levels.
@Suite struct NestingLimitTests {
    struct Node: CVManagedStruct {
        static let EntityName = "Node"
        var name: String
        var children: [Node]

        static func fromObject(_ o: ManagedObject) throws -> Node {
            try curry(self.init) <^> o <| "name" <^> o <|| "children"
        }
    }

    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel {
                Entity("Node") {
                    Attribute("name", .string)
                    Relationship("children", to: "Node", .orderedToMany, inverse: "parent")
                    Relationship("parent", to: "Node", inverse: "children")
                }
            }
        } catch {
            Issue.record("model: \(error)")
            return .empty
        }
    }()

    /// A chain of `levels` nodes, each the only child of the one before.
    static func chain(_ levels: Int) -> Node {
        var node = Node(name: "\(levels - 1)", children: [])
        for level in stride(from: levels - 2, through: 0, by: -1) { node = Node(name: "\(level)", children: [node]) }
        return node
    }

    static let stack = 1024 * 1024
    static let limit = ManagedObjectContext.maximumGraphDepth
    static let graphError = CVManagedStructError.nestingTooDeep(
        entity: "Node", what: "a graph of nested structs", limit: limit)

    @Test func boxingAGraphDeeperThanTheLimitThrowsAndBoxesNothing() throws {
        let store = MemoryStore(model: Self.model)
        let deep = Self.chain(2_000)
        let (error, leftChanges) = try SmallStack.run(size: Self.stack) { () -> (CVManagedStructError?, Bool) in
            let context = ManagedObjectContext(store: store)
            do {
                try deep.toObject(context)
                return (nil, context.hasChanges)
            } catch {
                return (error as? CVManagedStructError, context.hasChanges)
            }
        }
        #expect(error == Self.graphError)
        #expect(!leftChanges)
        #expect(store.count(of: "Node") == 0)
        withExtendedLifetime(deep) {}
    }

    @Test func aGraphAtTheLimitBoxesAndUnboxesOnASmallStack() throws {
        let store = MemoryStore(model: Self.model)
        let value = Self.chain(Self.limit)
        let read = try SmallStack.run(size: Self.stack) { () -> Int in
            let writer = ManagedObjectContext(store: store)
            try value.toObject(writer)
            try writer.save()
            let context = ManagedObjectContext(store: store)
            let roots = try context.fetch(FetchRequest(entityName: "Node", predicate: .key("name") == "0"))
            var node = try Node.fromObject(try #require(roots.first))
            var depth = 1
            while let child = node.children.first {
                node = child
                depth += 1
            }
            return depth
        }
        #expect(read == Self.limit)
        #expect(store.count(of: "Node") == Self.limit)
    }

    @Test func unboxingAStoredChainDeeperThanTheLimitThrows() throws {
        let store = MemoryStore(model: Self.model)
        // Built through the object API, which nests nothing, and stored: 3 times the limit.
        let builder = ManagedObjectContext(store: store)
        var parent = try builder.insert(entityName: "Node")
        try parent.setValue("0", forKey: "name")
        for level in 1..<(3 * Self.limit) {
            let child = try builder.insert(entityName: "Node")
            try child.setValue("\(level)", forKey: "name")
            try parent.setObjects([child], forKey: "children")
            parent = child
        }
        try builder.save()
        let error = try SmallStack.run(size: Self.stack) { () -> CVManagedStructError? in
            let context = ManagedObjectContext(store: store)
            let root = try #require(
                try context.fetch(FetchRequest(entityName: "Node", predicate: .key("name") == "0")).first)
            do {
                _ = try Node.fromObject(root)
                return nil
            } catch {
                return error as? CVManagedStructError
            }
        }
        #expect(
            error == .nestingTooDeep(entity: "Node", what: "a graph of related objects", limit: Self.limit))
    }
}

extension NestingLimitTests {
    @Test func aChainOfObjectsWithoutAContextIsBoundedToo() throws {
        // Ephemeral objects linked with setObjects nest as deep as the caller likes.
        let levels = 3 * Self.limit
        let error = try SmallStack.run(size: Self.stack) { () -> CVManagedStructError? in
            let root = try Node(name: "0", children: []).toObject(nil)
            var parent = root
            for level in 1..<levels {
                let child = try Node(name: "\(level)", children: []).toObject(nil)
                try parent.setObjects([child], forKey: "children")
                parent = child
            }
            do {
                _ = try Node.fromObject(root)
                return nil
            } catch {
                return error as? CVManagedStructError
            }
        }
        #expect(error == .nestingTooDeep(entity: "Node", what: "a graph of related objects", limit: Self.limit))
    }
}
