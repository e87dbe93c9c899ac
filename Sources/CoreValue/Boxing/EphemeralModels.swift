import Foundation

/// The entities known to the process, for boxing without a context.
///
/// Every ``ManagedObjectContext`` registers its store's model here, and ``register(_:)`` does so
/// explicitly; `toObject(nil)` looks the struct's `EntityName` up here to build an ephemeral object. When two
/// models declare an entity of the same name, the last one registered wins.
public enum EphemeralModels {
    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var entities: [String: EntityIndex] = [:]
    }

    private static let registry = Registry()

    /// Makes a model's entities available to boxing without a context.
    public static func register(_ model: ManagedObjectModel) {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        for entity in model.entities where registry.entities[entity.name]?.entity != entity {
            registry.entities[entity.name] = EntityIndex(entity, in: model)
        }
    }

    /// The registered entity of this name.
    ///
    /// - Throws: ``CVManagedStructError/unknownEntity(_:)``.
    static func entity(_ name: String) throws -> EntityIndex {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        guard let entity = registry.entities[name] else { throw CVManagedStructError.unknownEntity(name) }
        return entity
    }
}
