@_spi(Driver) import LibPQ
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Statements built once per shape (what fixes their text: a table and the columns an `UPDATE` sets, an
/// entity and the attribute a read compares), kept rendered, to be sent again with other values bound
/// (``SQL/replacingBinds(_:)``): a request's read or save then builds no SQL text.
///
/// Kept in a few shards, each thread using the one its identity picks: every request of every pooled
/// connection looks a statement up here, and with one lock a thread preempted while holding it made the
/// others wait in the kernel (a twentieth of the request path's CPU with 8 connections on 2 cores). A shape
/// is then built once per shard, not once per store. Bounded: past ``capacity`` shapes in a shard (a
/// persistent struct's updates set any subset of its columns) new ones are built each time and not kept.
final class StatementTemplates<Shape: Hashable & Sendable>: Sendable {
    static var capacity: Int { 512 }
    static var shardCount: Int { 8 }

    private final class Shard: Sendable {
        let kept = Mutex<Kept>(Kept())
    }
    /// A shard's statements, and the last few it handed out, looked at first: a request's shapes hold kept
    /// texts and short names, compared without hashing them (``RecentlyFound``). Statements are never
    /// dropped, so a recent entry never goes stale.
    private struct Kept {
        var table: [Shape: SQL] = [:]
        var recent = RecentlyFound<Shape, SQL>()
    }
    private let shards = (0..<StatementTemplates.shardCount).map { _ in Shard() }

    /// The calling thread's shard.
    private var shard: Shard {
        // Thread identities are addresses a stack apart: a multiplicative hash spreads their high bits.
        let identity = UInt64(pthreadID())
        let index = Int(truncatingIfNeeded: (identity &* 0x9E37_79B9_7F4A_7C15) >> 61)
        return shards[index % shards.count]
    }

    /// The statement of `shape` with `binds` in place of the kept one's values, or `nil` when none is kept.
    func statement(for shape: Shape, binding binds: [SQLBind]) -> SQL? {
        let kept = shard.kept.withLock { kept -> SQL? in
            if let sql = kept.recent.value(for: shape) { return sql }
            guard let sql = kept.table[shape] else { return nil }
            kept.recent.found(shape, sql)
            return sql
        }
        return kept?.replacingBinds(binds)
    }

    /// `build()`'s statement, rendered and kept for `shape` while there is room.
    func keep(_ shape: Shape, _ build: () throws -> SQL) rethrows -> SQL {
        let sql = try build().renderedOnce()
        shard.kept.withLock { kept in
            if kept.table.count < Self.capacity { kept.table[shape] = sql }
        }
        return sql
    }
}

/// The calling thread's `pthread_self()`, as a number.
private func pthreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}
