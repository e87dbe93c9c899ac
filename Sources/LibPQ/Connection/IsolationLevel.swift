/// A transaction isolation level for ``Connection/withTransaction(isolation:readOnly:_:)``.
package enum IsolationLevel: String, Sendable {
    /// `READ COMMITTED`, PostgreSQL's default.
    case readCommitted
    /// `REPEATABLE READ`: one snapshot for the whole transaction.
    case repeatableRead
    /// `SERIALIZABLE`: may fail with ``SQLState/serializationFailure``; retry the transaction then.
    case serializable

    /// The SQL words after `ISOLATION LEVEL`.
    var sql: String {
        switch self {
        case .readCommitted: "READ COMMITTED"
        case .repeatableRead: "REPEATABLE READ"
        case .serializable: "SERIALIZABLE"
        }
    }
}
