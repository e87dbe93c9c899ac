/// A statement of a pipeline failed on the server.
///
/// The statements after ``index`` were skipped by the server; the ones before it ran. The connection is
/// usable afterwards (out of pipeline mode).
package struct PipelineError: Error, Sendable, CustomStringConvertible {
    /// The zero-based position of the failing statement in the array passed to ``Connection/pipeline(_:)``.
    package var index: Int
    /// The server's error for that statement.
    package var error: DatabaseError

    /// Creates a pipeline error for the statement at `index`.
    package init(index: Int, error: DatabaseError) {
        self.index = index
        self.error = error
    }

    /// `"pipeline statement <index> failed: <error>"`.
    package var description: String { "pipeline statement \(index) failed: \(error)" }
}
