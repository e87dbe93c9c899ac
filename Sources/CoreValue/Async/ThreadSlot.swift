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
    private let key: pthread_key_t?

    package init() {
        var key = pthread_key_t()
        self.key = pthread_key_create(&key, nil) == 0 ? key : nil
    }

    /// Whether the slot has a key (it could always be made so far).
    package var isAvailable: Bool { key != nil }

    /// The object this thread's slot holds, not retained by the slot: whoever set it keeps it alive while it
    /// is set (``withObject(_:_:)``) or for the thread's life (``setForThisThread(_:)``).
    package var object: Object? {
        guard let key, let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Object>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Whether this thread's slot holds `object` (compared by identity).
    package func holds(_ object: Object) -> Bool {
        guard let key else { return false }
        // Typed as an optional and compared as the same pointer type: `pthread_getspecific`'s result is
        // implicitly unwrapped, and converting it to another pointer type for `==` unwraps it, which traps on
        // an empty slot.
        let held: UnsafeMutableRawPointer? = pthread_getspecific(key)
        return held == Unmanaged.passUnretained(object).toOpaque()
    }

    /// Runs `body` with `object` in this thread's slot, then puts back what was there.
    package func withObject<R>(_ object: Object, _ body: () throws -> R) rethrows -> R {
        guard let key else { return try body() }
        let previous: UnsafeMutableRawPointer? = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
        defer { pthread_setspecific(key, previous) }
        // `object` outlives `body` (the caller holds it), so the unretained pointer stays valid.
        return try withExtendedLifetime(object) { try body() }
    }

    /// Puts `object` in this thread's slot for the rest of the thread's life: the caller keeps it alive
    /// that long (a thread that runs only for it).
    package func setForThisThread(_ object: Object) {
        guard let key else { return }
        pthread_setspecific(key, Unmanaged.passUnretained(object).toOpaque())
    }
}

/// A thread-local integer in a ``ThreadSlot``'s way (the word itself holds it, nothing to free).
package struct ThreadCounter: Sendable {
    private let key: pthread_key_t?

    package init() {
        var key = pthread_key_t()
        self.key = pthread_key_create(&key, nil) == 0 ? key : nil
    }

    /// Whether the counter has a key; without one it reads 0 and ignores writes.
    package var isAvailable: Bool { key != nil }

    /// This thread's value (0 until set).
    package var value: Int {
        get {
            guard let key else { return 0 }
            let word: UnsafeMutableRawPointer? = pthread_getspecific(key)
            return Int(bitPattern: word)
        }
        nonmutating set {
            guard let key else { return }
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue))
        }
    }
}
