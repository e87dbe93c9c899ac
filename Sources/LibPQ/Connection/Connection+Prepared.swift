import CLibPQ

extension Connection {
    /// Runs a statement through the statement cache: `run` gets the name it was prepared under (prepared
    /// now, one round trip, when it is new), or `nil` to send it unnamed (no cache).
    ///
    /// A cached statement the server rejects as stale is dropped (see ``statementCacheCapacity``); outside
    /// a transaction the failed call changed nothing, so it is run once more, prepared afresh or unnamed.
    func withStatement<R>(
        _ handle: OpaquePointer, _ sql: String, _ encoded: EncodedParameters, _ run: (_ name: String?) throws -> R
    ) throws -> R {
        guard statementCache.capacity > 0 else { return try run(nil) }
        deallocateRetired(handle)
        let key = StatementCache.Key(sql: sql, types: encoded.types)
        do {
            return try run(try cachedName(handle, key, encoded.count))
        } catch let error as DatabaseError where forgetStale(key, error) {
            guard PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
            guard statementCache.capacity > 0 else { return try run(nil) }
            return try run(try cachedName(handle, key, encoded.count))
        }
    }

    /// The name a statement is prepared under, preparing it first when the cache does not hold it.
    private func cachedName(_ handle: OpaquePointer, _ key: StatementCache.Key, _ count: Int32) throws -> String {
        if let name = statementCache.name(of: key) { return name }
        let name = statementCache.add(key)
        roundTrips += 1
        let result = key.types.withUnsafeBufferPointer { PQprepare(handle, name, key.sql, count, $0.baseAddress) }
        do {
            _ = try check(result, handle: handle, sql: key.sql)
        } catch {
            statementCache.discard(key)
            throw error
        }
        statementsPrepared += 1
        return name
    }

    /// Whether `error`, from running the cached statement `key`, says the server can't run it as prepared;
    /// the cache is adjusted then.
    ///
    /// 0A000 from `RevalidateCachedQuery` ("cached plan must not change result type": a schema change since
    /// it was prepared) drops the statement. 26000 (the server does not know the name) means the session is
    /// not the one that prepared it (`DISCARD ALL`, or a transaction-mode pooler that moved the client to
    /// another server connection): the cache is turned off for good on this connection, as preparing on
    /// such a session can never be relied on.
    @discardableResult
    func forgetStale(_ key: StatementCache.Key, _ error: DatabaseError) -> Bool {
        if error.sqlState == .invalidSQLStatementName {
            statementCache.removeAll()
            statementCache.resize(to: 0)
            return true
        }
        guard error.sqlState == .featureNotSupported, error.sourceFunction == "RevalidateCachedQuery" else {
            return false
        }
        statementCache.remove(key)
        return true
    }

    /// ``forgetStale(_:_:)`` for the failing entry of a pipeline.
    func forgetStale(_ statements: [SentStatement], at index: Int, _ error: DatabaseError) {
        guard index < statements.count, let key = statements[index].cached ?? statements[index].preparing else {
            return
        }
        forgetStale(key, error)
    }

    /// Deallocates the statements dropped from the cache, when the connection is idle (one round trip per
    /// statement; only once the cache is full, or after a stale statement). Errors are ignored: the
    /// statement may never have been prepared, and nothing else is in flight.
    func deallocateRetired(_ handle: OpaquePointer) {
        guard !statementCache.retired.isEmpty, PQtransactionStatus(handle) == PQTRANS_IDLE else { return }
        for name in statementCache.takeRetired() {
            roundTrips += 1
            PQclear(PQexec(handle, "DEALLOCATE " + Connection.quoteIdentifier(name)))
        }
    }
}
