/// One statement of a pipeline: SQL text and its bound parameters.
public struct PipelineStatement: Sendable {
    /// The SQL text of one statement, with `$1`, `$2`, ... placeholders.
    public var sql: String
    /// The bound parameters.
    public var parameters: [PostgresValue]

    /// Creates a statement for ``Connection/pipeline(_:)``.
    public init(_ sql: String, _ parameters: [PostgresValue] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}
