import Synchronization
import LibPQ

/// Which Unicode version's lower-case mapping the server's `ILIKE ... COLLATE "und-x-icu"` applies: that of
/// the ICU PostgreSQL was built with, which SQL cannot ask for before PostgreSQL 17. So the server lower-cases
/// one capital letter of each Unicode version that added lower-case mappings, and the newest it maps tells.
enum ServerCaseMapping {
    /// A capital letter first assigned in each Unicode version since 11.0 that added lower-case mappings
    /// (15.0 and 15.1 added none), oldest first.
    static let probes: [(version: Unicode.Version, letter: Unicode.Scalar)] = [
        ((11, 0), "\u{1C90}"), ((12, 0), "\u{A7BA}"), ((13, 0), "\u{A7C7}"), ((14, 0), "\u{2C2F}"),
        ((16, 0), "\u{A7CB}"), ((17, 0), "\u{A7CE}"),
    ]

    /// The Unicode versions from 10.0 on, for naming the newest version a server's mapping agrees with.
    static let releases: [Unicode.Version] = [
        (10, 0), (11, 0), (12, 0), (12, 1), (13, 0), (14, 0), (15, 0), (15, 1), (16, 0), (17, 0),
    ]

    /// The ICU root collation, whose case mapping is Unicode's full one: what case-insensitive matches use.
    static let icuCollation = "und-x-icu"
    /// PostgreSQL 18's builtin collation with Unicode's full case mapping: used on a server built without ICU
    /// (the embedded builds, say).
    static let builtinCollation = "pg_unicode_fast"

    /// The collation the server's case-insensitive matches should use: ICU's, else the builtin one; `nil` when
    /// it has neither (a server before 18 built without ICU), and then ``icuCollation`` is kept, and a
    /// case-insensitive match fails with the server's error naming it.
    static let collationSQL =
        "SELECT collname::text FROM pg_collation WHERE collname IN ('\(icuCollation)', '\(builtinCollation)') "
        + "ORDER BY collname <> '\(icuCollation)' LIMIT 1"

    /// The statement: the probes lower-cased as `ILIKE` under `collation` lower-cases them.
    static func sql(_ collation: String) -> String {
        "SELECT lower($1::text COLLATE \(SQLIdentifier(collation).quoted))"
    }

    /// The probes' letters, in order, as the statement's parameter.
    static var text: String { String(String.UnicodeScalarView(probes.map(\.letter))) }

    /// The newest Unicode version whose case mapping agrees with the server's, from what the server made of
    /// ``text``: the last release before the first probe it left as it is (15.1 for ICU 72 to 74, whose
    /// Unicode 15.0 and 15.1 map the same letters as 14.0 did); the newest release when it mapped them all.
    static func version(lowered: String) -> Unicode.Version {
        let scalars = Array(lowered.unicodeScalars)
        for (position, probe) in probes.enumerated() {
            let mapped = position < scalars.count && scalars[position] != probe.letter
            guard !mapped else { continue }
            let later = releases.firstIndex { ($0.major, $0.minor) >= (probe.version.major, probe.version.minor) }
            return releases[max(0, (later ?? releases.count) - 1)]
        }
        return releases[releases.count - 1]
    }

    /// Asks the server; `nil` when it answers without saying (a server built without ICU, whose `ILIKE` then
    /// fails anyway).
    ///
    /// - Throws: The driver's errors other than the server's (a lost connection): the server was not asked.
    static func read(on connection: Connection, collation: String) throws -> Unicode.Version? {
        let result: QueryResult
        do {
            result = try connection.query(sql(collation), [try PostgresValue(text)])
        } catch is DatabaseError {
            return nil
        }
        guard let lowered = try? result.decode(String.self, row: 0, column: 0),
            lowered.unicodeScalars.count == probes.count
        else { return nil }
        return version(lowered: lowered)
    }

    /// Finds the server's case collation, keeps it in `kept`, and reads its Unicode version.
    ///
    /// - Throws: As ``read(on:collation:)``.
    static func read(on connection: Connection, keepingCollationIn kept: CaseCollation) throws -> Unicode.Version? {
        let found = try? connection.query(collationSQL).decode(String.self, row: 0, column: 0)
        if let found { kept.set(found) }
        return try read(on: connection, collation: kept.name)
    }
}

/// The collation case-insensitive matches use on this store's server (``ServerCaseMapping``), found when the
/// store first talks to it; ``ServerCaseMapping/icuCollation`` until then.
package final class CaseCollation: Sendable {
    private let value = Mutex(ServerCaseMapping.icuCollation)

    /// The collation's name.
    var name: String { value.withLock { $0 } }

    func set(_ name: String) { value.withLock { $0 = name } }
}
