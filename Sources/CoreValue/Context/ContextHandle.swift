/// A reference to a context, made once per context and shared by its objects: `nil` once the context is gone.
///
/// Unowned, not weak: a weak reference gave every context a side table, made and freed with each request's
/// context (an allocation and a free more per request); an unowned one is counted in the context's own header.
/// The context's `deinit` clears it before anything else, so it never names a context being freed, and were it
/// read afterwards all the same, the runtime would stop the process rather than hand out freed memory. (A
/// context and its objects are used by one thread at a time, as with the weak reference.)
final class ContextHandle {
    unowned(safe) var context: ManagedObjectContext?
}
