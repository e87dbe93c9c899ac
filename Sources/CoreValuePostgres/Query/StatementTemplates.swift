import Synchronization

/// Statements built once per shape (what fixes their text: a table and the columns an `UPDATE` sets, an
/// entity and the attribute a read compares), kept rendered, to be sent again with other values bound
/// (``SQL/replacingBinds(_:)``): a request's read or save then builds no SQL text.
///
/// Bounded: past ``capacity`` shapes (a persistent struct's updates set any subset of its columns) new ones
/// are built each time and not kept.
final class StatementTemplates<Shape: Hashable & Sendable>: Sendable {
    static var capacity: Int { 512 }
    private let kept = Mutex<[Shape: SQL]>([:])

    /// The statement of `shape` with `binds` in place of the kept one's values, or `nil` when none is kept.
    func statement(for shape: Shape, binding binds: [SQLBind]) -> SQL? {
        kept.withLock { $0[shape] }?.replacingBinds(binds)
    }

    /// `build()`'s statement, rendered and kept for `shape` while there is room.
    func keep(_ shape: Shape, _ build: () throws -> SQL) rethrows -> SQL {
        let sql = try build().renderedOnce()
        kept.withLock { kept in
            if kept.count < Self.capacity { kept[shape] = sql }
        }
        return sql
    }
}
