@_spi(StoreImplementation) import CoreValue
import LibPQ

extension PostgresStore {
    /// Opens a store whose every call runs on `sandbox`'s one connection, inside its transaction (for
    /// `TestSchema.withTransaction` in `CoreValueTesting`): its saves become savepoints, and nothing commits.
    ///
    /// The store asks at open what it always asks (the schema check unless ``Configuration/verifySchema`` is
    /// off, the server's case mapping), on the sandbox's connection. `configuration`'s pool size is taken as 1
    /// (its async calls' threads: more would only queue for the one connection).
    ///
    /// - Throws: As ``init(model:configuration:)``.
    package convenience init(model: ManagedObjectModel, configuration: Configuration, sandbox: TransactionSandbox)
        throws
    {
        var configuration = configuration
        configuration.poolSize = 1
        try self.init(model: model, configuration: configuration, sessions: sandbox)
        do {
            try sandbox.withConnection { connection in
                if configuration.verifySchema {
                    try SchemaVerifier(mapping: mapping, schema: schema).verify(on: connection)
                }
                let answer = try ServerCaseMapping.read(
                    on: connection, keepingCollationIn: fetchStatements.caseCollation)
                serverCaseMapping.withLock { $0 = answer ?? MemoryStore.defaultCaseMappingVersion }
            }
        } catch {
            throw PostgresStoreError.wrapping(error)
        }
    }

    /// Whether the store works inside a test's transaction sandbox.
    var isSandboxed: Bool { sessions is TransactionSandbox }

    /// Throws ``PostgresStoreError/Code/sandboxed`` for `what`, which needs committed transactions, in a
    /// sandbox, where none ever commits.
    func requireCommits(for what: String) throws {
        guard isSandboxed else { return }
        throw PostgresStoreError(
            .sandboxed,
            "\(what) needs committed transactions, and a transaction sandbox (TestSchema.withTransaction) never "
                + "commits: test it with a schema per test (TestSchema.with)")
    }
}
