import LibPQ

/// Why a server refused to let a store log in, read from libpq's message (it reports these only as text):
/// ``PostgresStoreError/loginRefusal`` of an error with code ``PostgresStoreError/Code/loginRefused``.
/// None of these mends by waiting, so the store throws them at once instead of retrying.
public enum LoginRefusal: String, Sendable, Hashable, CustomStringConvertible {
    /// The server's certificate is not signed by an authority in `sslrootcert` (`sslmode=verify-ca` or
    /// `verify-full`).
    case untrustedCertificate
    /// The server's certificate does not name the host connected to (`sslmode=verify-full`).
    case hostNameMismatch
    /// The server accepts this login only over TLS (a `hostssl` rule), and the connection had none
    /// (`sslmode=disable`, or `prefer` without TLS).
    case encryptionRequired
    /// The connection asked for TLS (`sslmode=require` or stricter) and the server offers none.
    case encryptionUnavailable
    /// The password (or the role) was not accepted.
    case authenticationFailed
    /// `channel_binding=require`, and the server authenticated without channel binding (not SCRAM over TLS).
    case channelBindingUnavailable
    /// No `pg_hba.conf` rule allows this host, role and database.
    case notPermitted

    /// The refusal a failed connection's message states, or `nil` for any other failure (no server there).
    init?(message: String) {
        let rules: [(String, LoginRefusal)] = [
            ("certificate verify failed", .untrustedCertificate),
            ("does not match host name", .hostNameMismatch),
            ("server does not support SSL", .encryptionUnavailable),
            ("channel binding required", .channelBindingUnavailable),
            ("authentication failed", .authenticationFailed),
            ("no encryption", .encryptionRequired),
            ("SSL off", .encryptionRequired),
            ("no pg_hba.conf entry", .notPermitted),
        ]
        guard let match = rules.first(where: { message.localizedCaseInsensitiveContains($0.0) }) else { return nil }
        self = match.1
    }

    /// The refusal's name.
    public var description: String { rawValue }
}

extension LibPQError {
    /// The text a refusal is read from: libpq's own message for a failed connection, without the
    /// connection string's description (whose `sslmode=...` or `password=********` once made every failed
    /// connection over TLS, or with a password, look like a refusal, so a failover was never waited out).
    var refusalText: String { libpqMessage ?? message }
}
