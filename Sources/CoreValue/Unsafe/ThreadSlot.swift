import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread-local slot: the one place where the library keeps values per thread (pthread keys, and the raw
/// words they hold).
///
/// Foundation's `Thread.threadDictionary` boxes each value in a dictionary per thread; a pthread key is a
/// load. The async calls read their cancellation token this way around every statement, a store's threads
/// mark themselves with it, and context-less unboxing counts its nesting with it. The key is made once and
/// never deleted; when the process has none left, the slot reads as empty and ignores writes (callers then
/// lose a fast path, never correctness: see each use).
package struct ThreadSlot<Object: AnyObject>: Sendable {
    private let key = ThreadKey()

    package init() {}

    /// Whether the slot has a key (it could always be made so far).
    package var isAvailable: Bool { key.exists }

    /// The object this thread's slot holds, not retained by the slot: whoever set it keeps it alive while it
    /// is set (``withObject(_:_:)``) or for the thread's life (``setForThisThread(_:)``).
    package var object: Object? {
        key.word.map { Unmanaged<Object>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Whether this thread's slot holds `object` (compared by identity).
    package func holds(_ object: Object) -> Bool {
        key.word == Unmanaged.passUnretained(object).toOpaque()
    }

    /// Runs `body` with `object` in this thread's slot, then puts back what was there.
    package func withObject<R>(_ object: Object, _ body: () throws -> R) rethrows -> R {
        guard key.exists else { return try body() }
        let previous = key.word
        key.set(Unmanaged.passUnretained(object).toOpaque())
        defer { key.set(previous) }
        // `object` outlives `body` (the caller holds it), so the unretained pointer stays valid.
        return try withExtendedLifetime(object) { try body() }
    }

    /// Puts `object` in this thread's slot for the rest of the thread's life: the caller keeps it alive
    /// that long (a thread that runs only for it).
    package func setForThisThread(_ object: Object) {
        key.set(Unmanaged.passUnretained(object).toOpaque())
    }
}

/// A thread-local integer in a ``ThreadSlot``'s way (the word itself holds it, nothing to free).
package struct ThreadCounter: Sendable {
    private let key = ThreadKey()

    package init() {}

    /// Whether the counter has a key; without one it reads 0 and ignores writes.
    package var isAvailable: Bool { key.exists }

    /// This thread's value (0 until set).
    package var value: Int {
        get { Int(bitPattern: key.word) }
        nonmutating set { key.set(UnsafeRawPointer(bitPattern: newValue)) }
    }
}

/// A pthread key, made once and never deleted, and the word each thread keeps under it: the only code here that
/// calls pthread. Without a key (the process had none left) every word reads `nil` and writes are ignored.
private struct ThreadKey: Sendable {
    private let key: pthread_key_t?

    init() {
        var key = pthread_key_t()
        self.key = pthread_key_create(&key, nil) == 0 ? key : nil
    }

    var exists: Bool { key != nil }

    /// This thread's word. Typed as an optional: `pthread_getspecific`'s result is implicitly unwrapped, and
    /// converting it to another pointer type (for `==`, say) would unwrap it and trap on an empty slot.
    var word: UnsafeMutableRawPointer? {
        guard let key else { return nil }
        let word: UnsafeMutableRawPointer? = pthread_getspecific(key)
        return word
    }

    func set(_ word: UnsafeRawPointer?) {
        guard let key else { return }
        pthread_setspecific(key, word)
    }
}
