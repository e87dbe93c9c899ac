@_spi(StoreImplementation) import CoreValue
import Foundation
import LibPQ

/// Applies versioned migration files to a database, once, in order, under an advisory lock.
///
/// ```swift
/// let migrator = try Migrator(url: url, schema: "app")
/// let applied = try migrator.migrate(try Migration.load(from: URL(fileURLWithPath: "migrations")))
/// ```
///
/// Many processes may migrate at once: each file runs in its own transaction, which first takes a
/// transaction-scoped advisory lock (keyed by the schema) and re-reads the history, so each file is applied
/// exactly once while the others wait and then find it done. No session state is kept, so this works behind
/// pgbouncer in transaction mode. Each file runs with the schema as `search_path` and is recorded with its
/// SHA-256 in `_corevalue_migrations`. An applied file whose contents changed is an error, and so is a
/// pending file whose version is older than an applied one.
public struct Migrator: Sendable {
    /// The name of the table that records applied migrations.
    public static let historyTable = "_corevalue_migrations"
    /// Where to connect.
    public let configuration: ConnectionConfiguration
    /// The schema to migrate (created if missing), or `nil` for the search path's first schema.
    public let schema: String?

    /// Creates a migrator.
    public init(configuration: ConnectionConfiguration, schema: String? = nil) {
        self.configuration = configuration
        self.schema = schema
    }

    /// Creates a migrator from a URL or `key=value` connection string.
    ///
    /// - Throws: The driver's error for a malformed connection string.
    public init(url: String, schema: String? = nil) throws {
        self.init(configuration: try ConnectionConfiguration(url), schema: schema)
    }

    /// Applies the pending migrations and returns them (empty when there was nothing to do).
    ///
    /// - Throws: ``PostgresStoreError/Code/migrationChanged`` naming an applied file whose checksum changed,
    ///   ``PostgresStoreError/Code/migrationOutOfOrder`` naming a pending file older than an applied one
    ///   (either way that file and the ones after it are not applied); `DatabaseError` from a failing file
    ///   (that file is rolled back, the files before it stay applied), or ``PostgresStoreError/Code/permissionDenied``
    ///   when the role lacks a right; connection errors.
    public func migrate(_ migrations: [Migration]) throws -> [Migration] {
        try namingMissingRights { try migrateFiles(migrations) }
    }

    private func migrateFiles(_ migrations: [Migration]) throws -> [Migration] {
        let connection = try Connection(configuration)
        defer { connection.close() }
        let ordered = migrations.sorted { $0.version < $1.version }
        try connection.withTransaction { connection in
            try lock(connection)
            if let schema { try connection.execute("CREATE SCHEMA IF NOT EXISTS \(SQLIdentifier.quote(schema))") }
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(history.quoted) (version bigint PRIMARY KEY, name text NOT NULL, "
                    + "checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
        }
        var done: [Migration] = []
        while let migration = try applyNext(ordered, on: connection) { done.append(migration) }
        return done
    }

    /// The DDL that brings the schema to `model`: new tables, columns, join tables, optionality, defaults and
    /// unique constraints as statements, destructive steps as a list (see ``SchemaDiff``). Changes nothing;
    /// print ``SchemaDiff/migrationText`` into a migration file to review and apply it. With
    /// `recordsHistory`, for a store that records history: its two history tables too.
    ///
    /// - Throws: Connection and server errors.
    public func diff(model: ManagedObjectModel, recordsHistory: Bool = false) throws -> SchemaDiff {
        let connection = try Connection(configuration)
        defer { connection.close() }
        return SchemaDiff(
            mapping: SchemaMapping(model: model, recordsHistory: recordsHistory),
            catalog: try SchemaCatalog.read(schema, on: connection),
            schema: schema)
    }

    /// Creates what is missing for a model (for tests and quick starts; production schemas go through
    /// migration files): in one transaction, under the schema's advisory lock, the schema if needed and every
    /// statement of `diff(model:recordsHistory:)`. Returns what was applied (empty when the schema already matched).
    /// Nothing is recorded in the migration history.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidModel`` for a model PostgreSQL can't hold,
    ///   ``PostgresStoreError/Code/migrationNeedsReview`` listing destructive steps (then nothing is applied),
    ///   ``PostgresStoreError/Code/permissionDenied`` when the role lacks a right, connection and server errors
    ///   (then nothing is applied either).
    @discardableResult
    public func migrate(model: ManagedObjectModel, recordsHistory: Bool = false) throws -> SchemaDiff {
        try namingMissingRights { try migrateModel(SchemaMapping(model: model, recordsHistory: recordsHistory)) }
    }

    /// A role without a right the migration needs (an application role, say) gets
    /// ``PostgresStoreError/Code/permissionDenied`` naming the right and the object, not the bare 42501.
    private func namingMissingRights<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.sqlState == .insufficientPrivilege {
            throw PostgresStoreError.permissionDenied(error)
        }
    }

    private func migrateModel(_ mapping: SchemaMapping) throws -> SchemaDiff {
        try mapping.validate()
        let connection = try Connection(configuration)
        defer { connection.close() }
        return try connection.withTransaction { connection in
            try lock(connection)
            if let schema { try connection.execute("CREATE SCHEMA IF NOT EXISTS \(SQLIdentifier.quote(schema))") }
            let diff = SchemaDiff(
                mapping: mapping, catalog: try SchemaCatalog.read(schema, on: connection), schema: schema)
            guard diff.destructive.isEmpty else {
                throw PostgresStoreError(
                    .migrationNeedsReview,
                    "the schema differs from the model in ways that lose data or may fail; nothing was applied "
                        + "(write a migration file for them, see Migrator.diff(model:))",
                    mismatches: diff.destructive)
            }
            for statement in diff.statements { try connection.execute(statement) }
            return diff
        }
    }

    /// In one transaction, under the transaction's advisory lock: re-reads the history (another process may
    /// have applied files meanwhile), checks it, and applies the first pending file. Returns `nil` when none
    /// is pending.
    private func applyNext(_ ordered: [Migration], on connection: Connection) throws -> Migration? {
        try connection.withTransaction { connection -> Migration? in
            try lock(connection)
            let applied = try appliedMigrations(connection)
            try checkChecksums(ordered, applied: applied)
            guard let migration = ordered.first(where: { applied[$0.version] == nil }) else { return nil }
            if let newest = applied.keys.max(), migration.version < newest {
                throw PostgresStoreError(
                    .migrationOutOfOrder,
                    "migration file '\(migration.fileName)' is pending but version \(newest) is already applied; "
                        + "give it a version above \(newest)")
            }
            if let schema { try connection.execute("SET LOCAL search_path TO \(SQLIdentifier.quote(schema))") }
            try connection.execute(migration.sql)
            let record: SQL =
                "INSERT INTO \(history) (version, name, checksum) VALUES (\(bind: .int64(migration.version)), "
                + "\(bind: .text(migration.name)), \(bind: .text(migration.checksum)))"
            try connection.query(record.text, try record.binds.map(BindEncoding.postgresValue))
            return migration
        }
    }

    /// Takes the schema's transaction-scoped advisory lock: released at commit or rollback, so it works
    /// behind pgbouncer in transaction mode, where a session lock could outlive the work on a shared server
    /// connection.
    private func lock(_ connection: Connection) throws {
        let lock: SQL = "SELECT pg_advisory_xact_lock(\(bind: .int64(lockKey)))"
        try connection.query(lock.text, try lock.binds.map(BindEncoding.postgresValue))
    }

    /// The state of each migration file, and of applied versions that have no file.
    ///
    /// - Throws: Connection and server errors.
    public func status(_ migrations: [Migration]) throws -> [MigrationStatus] {
        let connection = try Connection(configuration)
        defer { connection.close() }
        let exists: SQL = "SELECT to_regclass(\(bind: .text(history.quoted))) IS NOT NULL"
        let found = try connection.query(exists.text, try exists.binds.map(BindEncoding.postgresValue))
        let applied = try found.decode(Bool.self, row: 0, column: 0) ? try appliedMigrations(connection) : [:]
        var statuses = migrations.map { migration -> MigrationStatus in
            guard let record = applied[migration.version] else {
                return MigrationStatus(version: migration.version, name: migration.name, state: .pending)
            }
            return MigrationStatus(
                version: migration.version, name: migration.name,
                state: record.checksum == migration.checksum ? .applied : .changed)
        }
        for (version, record) in applied.sorted(by: { $0.key < $1.key })
        where !migrations.contains(where: { $0.version == version }) {
            statuses.append(MigrationStatus(version: version, name: record.name, state: .missingFile))
        }
        return statuses.sorted { $0.version < $1.version }
    }

    private var history: SQLIdentifier { SQLIdentifier(Self.historyTable, schema: schema) }

    /// The advisory-lock key: the first 8 bytes of the SHA-256 of the schema's name.
    var lockKey: Int64 {
        let digest = SHA256.digest(Array(("corevalue.migrations:" + (schema ?? "")).utf8))
        return digest.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    private func appliedMigrations(_ connection: Connection) throws -> [Int64: (name: String, checksum: String)] {
        let result = try connection.query("SELECT version, name, checksum FROM \(history.quoted) ORDER BY version")
        var applied: [Int64: (name: String, checksum: String)] = [:]
        for row in 0..<result.rowCount {
            applied[try result.decode(Int64.self, row: row, column: 0)] = (
                try result.decode(String.self, row: row, column: 1), try result.decode(String.self, row: row, column: 2)
            )
        }
        return applied
    }

    private func checkChecksums(_ migrations: [Migration], applied: [Int64: (name: String, checksum: String)]) throws {
        for migration in migrations {
            guard let record = applied[migration.version], record.checksum != migration.checksum else { continue }
            throw PostgresStoreError(
                .migrationChanged,
                "migration file '\(migration.fileName)' was edited after it was applied (recorded checksum "
                    + "\(record.checksum.prefix(12))..., file \(migration.checksum.prefix(12))...); add a new migration instead"
            )
        }
    }
}

/// Whether one migration is applied.
public struct MigrationStatus: Sendable, Hashable {
    /// A migration's state.
    public enum State: String, Sendable, Hashable {
        /// Applied, with the file's current checksum.
        case applied
        /// Not applied yet.
        case pending
        /// Applied, but the file changed since.
        case changed
        /// Applied, but no file has this version.
        case missingFile
    }

    /// The version number.
    public var version: Int64
    /// The name.
    public var name: String
    /// The state.
    public var state: State
}
