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

    /// The statement: the probes lower-cased as `ILIKE` lower-cases them.
    static let sql = #"SELECT lower($1::text COLLATE "und-x-icu")"#

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
    static func read(on connection: Connection) throws -> Unicode.Version? {
        let result: QueryResult
        do {
            result = try connection.query(sql, [try PostgresValue(text)])
        } catch is DatabaseError {
            return nil
        }
        guard let lowered = try? result.decode(String.self, row: 0, column: 0),
            lowered.unicodeScalars.count == probes.count
        else { return nil }
        return version(lowered: lowered)
    }
}
