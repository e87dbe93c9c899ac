/// A column of a query result: its name and server type.
package struct Column: Sendable, Hashable {
    /// The column's name as the server reports it (an alias if the query gave one).
    package var name: String
    /// The column's server type.
    package var type: PostgresType

    /// Creates a column description.
    package init(name: String, type: PostgresType) {
        self.name = name
        self.type = type
    }
}
