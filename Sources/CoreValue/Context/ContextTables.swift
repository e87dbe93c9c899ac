/// The core's storage whose exclusive access is not checked at run time, all of it in this file: the context's
/// bookkeeping (``ContextTables``), a bulk save's table (``BulkInsert``) and an object's change tracking
/// (``PendingState``). (Boxing's records and layout caches are the others, in `BoxRecord.swift` and
/// `LayoutCache.swift`.)
///
/// Why unchecked: their accesses call into the standard library (a dictionary's or an array's growth, the
/// release of what they replace), so the compiler cannot prove them exclusive and checked each at run time,
/// about a dozen checks per request. Why that is sound: the types are internal, a context and its objects have
/// one user at a time, and nothing an access releases runs code that reaches them again (objects and snapshots
/// have no `deinit` of their own); the compiler still rejects any overlap it can see. Every marked property is
/// listed in `scripts/check-exclusivity.sh`, and `scripts/checked-build.sh` (in CI) runs the behaviour suite on
/// a build with every one of them checked again.

/// A context's bookkeeping, in one object the context makes with itself and reaches through plain accessors
/// (``ManagedObjectContext/registry`` and the others): its registered objects, its pending lists, the IDs a
/// fetch did not return, and its unique index.
final class ContextTables {
    @exclusivity(unchecked) var registry = Registry()
    @exclusivity(unchecked) var pendingInserts = PendingList()
    @exclusivity(unchecked) var pendingChanges = PendingList()
    @exclusivity(unchecked) var pendingDeletes = PendingList()
    @exclusivity(unchecked) var missingIDs: Set<ManagedObjectID> = []
    /// The unique index (``ManagedObjectContext/uniqueIndex``) and the objects waiting to join it.
    @exclusivity(unchecked) var uniqueIndex: [UniqueValue: ManagedObject] = [:]
    @exclusivity(unchecked) var unindexed: [ManagedObject] = []
    /// The context's struct layouts (``ManagedObjectContext/layouts``), made on first use: a context that only
    /// reads (a request's `get`) boxes nothing and never makes one.
    @exclusivity(unchecked) var layouts: LayoutCache?
    /// The versions structs written into objects were read at, where that is not the version this context read
    /// the object at (``ManagedObjectContext/readVersions``); empty in the usual save.
    @exclusivity(unchecked) var readVersions: [ObjectIdentifier: Int64] = [:]
}

/// During a streamed bulk save (``ManagedObjectContext/saveStreamed(_:)``), the entity whose objects it makes,
/// and the part's objects by identifier. Those objects are registered and indexed when the save commits: until
/// then nothing can look them up but the boxing of their own part (equal identifiers share one part), so they
/// skip the context's two large tables (two random memory accesses per object and 25 MB at 100,000).
final class BulkInsert {
    let entity: Int32
    @exclusivity(unchecked) var uniques: [UniqueValue: ManagedObject] = [:]
    init(entity: Int32) { self.entity = entity }
}

/// The change tracking of one object between saves: original values and links, and what the unique struct
/// that wrote it had. Most objects are fetched and only read; they never make one, so an object carries one
/// `nil` reference (made and freed with no work) instead of six empty collections.
///
/// Every field is unchecked for exclusive access: a context and its objects are used by one thread at a time,
/// and each check cost a thread-local lookup (a request's change of one attribute read and wrote the original
/// values three times, each checked).
final class PendingState {
    @exclusivity(unchecked) var originalAttributes: [String: AttributeValue] = [:]
    @exclusivity(unchecked) var originalLinks: [String: [Link]] = [:]
    @exclusivity(unchecked) var upsertKey: String?
    @exclusivity(unchecked) var upsertAttributes: Set<String>?
    @exclusivity(unchecked) var identifiedAttributes: Set<String>?
    @exclusivity(unchecked) var identifiedRelationships: Set<String> = []
}
