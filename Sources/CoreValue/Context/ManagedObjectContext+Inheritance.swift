// Entity inheritance in the context: a link to an entity with subentities holds a key of its hierarchy, and
// the object registered for that key may be of any subentity.
extension ManagedObjectContext {
    /// The registered object of the row `key` of a subentity of `destination`, for a link whose destination
    /// has subentities: a link holds only a key, and the object is registered under its own entity.
    ///
    /// `nil` at once for a model without inheritance, so the lookups of links cost what they did before.
    func registeredSubentityObject(_ destination: String, _ key: Int64) -> ManagedObject? {
        guard index.hasHierarchies, let info = index.entities[destination], info.isInHierarchy else { return nil }
        for kind in info.kinds where kind != destination {
            if let object = registered(kind)?[.permanent(kind, key)] { return object }
        }
        return nil
    }

    /// Whether relationship `key` of `info` may hold objects of several entities (its destination has
    /// subentities): its rows are then loaded by ID, as the store names each row's own entity.
    func linksSubentities(_ info: EntityIndex, _ key: String) -> Bool {
        guard index.hasHierarchies, let relationship = info.relationships[key] else { return false }
        return index.entities[relationship.destination]?.isInHierarchy ?? false
    }

    /// An ID that names a row the same way whichever entity of its hierarchy the ID names: a link to a
    /// parent is asked for by the parent's name, and the store answers with the row's own entity.
    func hierarchyID(_ id: ManagedObjectID) -> ManagedObjectID {
        guard index.hasHierarchies, let key = id.primaryKey, let info = index.entities[id.entityName],
            info.isInHierarchy
        else { return id }
        return .permanent(info.root, key)
    }

    /// The entities whose pending objects a fetch of `request` (for `info`) considers: `info` itself
    /// without inheritance, else the request's entities (``FetchRequest/entityNames(in:)``).
    func fetchedKinds(_ request: FetchRequest, _ info: EntityIndex) -> [EntityIndex] {
        guard info.isInHierarchy else { return [info] }
        return request.entityNames(in: model).compactMap { index.entities[$0] }
    }
}
