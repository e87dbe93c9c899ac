// Connecting ahead of use: the pool otherwise opens a connection when a call first needs one.
extension PostgresStore {
    /// Opens the pool's connections now, up to `count` (``Configuration/poolSize`` when `nil`), rather than as
    /// requests first need them: call it as the process starts, so that its first requests do not wait for
    /// connecting (a TCP and TLS handshake, the login, a new backend on the server), and so that a server it
    /// cannot reach shows at startup. Connections already open count; ones the server closes later, or older
    /// than ``Configuration/maxConnectionLifetime``, are opened again as requests need them. A server that
    /// cannot be reached is tried again within ``Configuration/failoverBudget``, as a request's is.
    ///
    /// - Returns: How many connections it opened.
    /// - Throws: ``PostgresStoreError/Code/serverUnavailable`` when the server could not be reached within the
    ///   budget (the connections opened before stay in the pool), the server's error for a refused login
    ///   (``PostgresStoreError/Code/loginRefused``), ``PostgresStoreError/Code/poolClosed`` after ``close()``.
    @discardableResult
    public func openConnections(_ count: Int? = nil) throws -> Int {
        var opened = 0
        try withRetries { try pool.open(upTo: count ?? configuration.poolSize, opened: &opened) }
        return opened
    }
}
