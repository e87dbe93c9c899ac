/// A column of a query result: its name and server type.
public struct Column: Sendable, Hashable {
    /// The column's name as the server reports it (an alias if the query gave one).
    public var name: String
    /// The column's server type.
    public var type: PostgresType

    /// Creates a column description.
    public init(name: String, type: PostgresType) {
        self.name = name
        self.type = type
    }
}
