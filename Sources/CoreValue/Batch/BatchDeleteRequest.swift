/// A batch delete: every stored row a predicate matches deleted by the store, with the entity's delete rules,
/// without fetching them into the caller's context (Core Data's `NSBatchDeleteRequest`).
public struct BatchDeleteRequest: Sendable, Hashable {
    /// The entity whose rows are deleted.
    public var entityName: String
    /// The rows deleted, or `nil` for every row of the entity.
    public var predicate: CVPredicate?
    /// Whether the result lists the IDs of the rows deleted (otherwise only their count).
    public var returnsObjectIDs: Bool
    /// Who the batch is by and its name, as a store that records history keeps them (``HistoryTransaction``);
    /// a context's `batchUpdate`/`batchDelete` fills in its own ``ManagedObjectContext/transactionAuthor``
    /// and ``ManagedObjectContext/transactionName`` where these are `nil`.
    public var transactionAuthor: String?
    /// The batch's name in history (see ``transactionAuthor``).
    public var transactionName: String?

    /// Creates a request.
    public init(entityName: String, predicate: CVPredicate? = nil, returnsObjectIDs: Bool = false) {
        self.entityName = entityName
        self.predicate = predicate
        self.returnsObjectIDs = returnsObjectIDs
    }

    /// The request with its predicate validated.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)`` and the predicate's validation errors.
    package func validated(in model: ManagedObjectModel) throws -> BatchDeleteRequest {
        var checked = self
        checked.predicate = try predicate?.validated(for: try model.entity(entityName), in: model)
        return checked
    }

    /// The request carried out through a context of its own: the matching objects fetched, deleted with the
    /// context's delete rules (cascades loaded and deleted, deny checked, links nullified) and saved in one
    /// transaction; done again, at most three times, when another writer changed a row meanwhile. How a store
    /// deletes what its query language cannot (``MemoryStore``; `PostgresStore` for cascades it cannot write
    /// in one statement).
    ///
    /// - Throws: ``CVManagedStructError/constraintViolation(entity:key:message:)`` for a `deny` rule with
    ///   related objects left; the store's errors. Nothing is deleted then.
    package func runThroughContext(on store: any Store) throws -> BatchResult {
        var attempt = 1
        while true {
            let context = ManagedObjectContext(store: store)
            context.transactionAuthor = transactionAuthor
            context.transactionName = transactionName
            let objects = try context.fetch(FetchRequest(entityName: entityName, predicate: predicate))
            let ids = objects.map(\.objectID).inKeyOrder()
            do {
                try context.delete(objects)
                try context.save()
            } catch let error as CVManagedStructError where error.code == .conflict && attempt < 3 {
                attempt += 1
                continue
            }
            return BatchResult(count: ids.count, objectIDs: returnsObjectIDs ? ids : nil)
        }
    }
}
