import Foundation

/// One versioned migration file, `NNNN_name.sql`.
public struct Migration: Sendable, Hashable {
    /// The number before the first underscore.
    public var version: Int64
    /// The rest of the file name, without `.sql`.
    public var name: String
    /// The file's SQL.
    public var sql: String
    /// The file name, for messages.
    public var fileName: String

    /// Creates a migration.
    public init(version: Int64, name: String, sql: String, fileName: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.fileName = fileName
    }

    /// The SHA-256 of the file's UTF-8 bytes, as 64 hex digits.
    public var checksum: String { SHA256.hex(Array(sql.utf8)) }

    /// The migrations in a directory, sorted by version. Files not ending in `.sql` are ignored.
    ///
    /// - Throws: ``PostgresStoreError/Code/invalidMigration`` for an unreadable directory or file, a name
    ///   that is not `NNNN_name.sql`, or two files with the same version.
    public static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PostgresStoreError(
                .invalidMigration, "cannot read the migrations directory '\(directory.path)': \(error)")
        }
        var migrations: [Migration] = []
        for fileName in names.sorted() where fileName.hasSuffix(".sql") {
            let stem = String(fileName.dropLast(4))
            guard let underscore = stem.firstIndex(of: "_"), let version = Int64(stem[..<underscore]), version >= 0
            else {
                throw PostgresStoreError(
                    .invalidMigration, "migration file '\(fileName)' is not named NNNN_name.sql")
            }
            let url = directory.appendingPathComponent(fileName)
            let sql: String
            do {
                sql = try String(contentsOf: url, encoding: .utf8)
            } catch {
                throw PostgresStoreError(.invalidMigration, "cannot read migration file '\(fileName)': \(error)")
            }
            if let other = migrations.first(where: { $0.version == version }) {
                throw PostgresStoreError(
                    .invalidMigration, "migration files '\(other.fileName)' and '\(fileName)' share version \(version)")
            }
            migrations.append(
                Migration(
                    version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql, fileName: fileName
                ))
        }
        return migrations.sorted { $0.version < $1.version }
    }
}
