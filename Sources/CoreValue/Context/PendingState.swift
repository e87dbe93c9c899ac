/// The change tracking of one object between saves: original values and links, and what the unique struct
/// that wrote it had. Most objects are fetched and only read; they never make one, so an object carries one
/// `nil` reference (made and freed with no work) instead of six empty collections.
///
/// The fields written once per boxed unique struct are unchecked for exclusive access (an internal type): a
/// context and its objects are used by one thread at a time, and each check cost a thread-local lookup.
final class PendingState {
    var originalAttributes: [String: AttributeValue] = [:]
    var originalLinks: [String: [Link]] = [:]
    @exclusivity(unchecked) var upsertKey: String?
    @exclusivity(unchecked) var upsertAttributes: Set<String>?
    @exclusivity(unchecked) var identifiedAttributes: Set<String>?
    var identifiedRelationships: Set<String> = []
}

/// A reference to a context, made once per context and shared by its objects: `nil` once the context is gone.
///
/// Unowned, not weak: a weak reference gave every context a side table, made and freed with each request's
/// context (about a tenth of a read's instructions); an unowned one is counted in the context's own header.
/// The context's `deinit` clears it before anything else, so it never names a context being freed, and were it
/// read afterwards all the same, the runtime would stop the process rather than hand out freed memory. (A
/// context and its objects are used by one thread at a time, as with the weak reference.)
final class ContextHandle {
    unowned(safe) var context: ManagedObjectContext?
}
