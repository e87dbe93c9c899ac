/// One statement of a pipeline: SQL text and its bound parameters.
package struct PipelineStatement: Sendable {
    /// The SQL text of one statement, with `$1`, `$2`, ... placeholders.
    package var sql: String
    /// The bound parameters.
    package var parameters: [PostgresValue]

    /// Creates a statement for ``Connection/pipeline(_:)``.
    package init(_ sql: String, _ parameters: [PostgresValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}
