@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

/// A server as managed databases run them (issue 33, point 1): TLS only, SCRAM-SHA-256 passwords, a
/// certificate checked with `sslmode=verify-full` and channel binding required. `make test` starts it
/// (scripts/tls-up.sh) and hands it over in COREVALUE_TLS_URL and COREVALUE_TLS_DIR.
@Suite struct TLSTests {
    static let environment = ProcessInfo.processInfo.environment

    /// The TLS server's connection string and directory (certificates, password), or `nil` with an issue
    /// recorded (CI) or a skip message.
    static func server(_ function: String = #function) -> (conninfo: String, directory: String)? {
        if let conninfo = environment["COREVALUE_TLS_URL"], let directory = environment["COREVALUE_TLS_DIR"] {
            return (conninfo, directory)
        }
        if environment["CI"] == "true" {
            Issue.record("COREVALUE_TLS_URL is not set; \(function) cannot run in CI (make test starts the server)")
        } else {
            print("skipped \(function): no TLS server (run scripts/tls-up.sh and source .db/tls/env)")
        }
        return nil
    }

    /// The password in `conninfo`, to check that no error shows it.
    static func password(_ conninfo: String) -> String {
        conninfo.split(separator: " ").first { $0.hasPrefix("password=") }.map { String($0.dropFirst(9)) } ?? ""
    }

    /// libpq's messages (15) for each refusal, and failures that are no refusal.
    @Test func refusalsAreReadFromLibpqsMessages() {
        let cases: [(String, LoginRefusal?)] = [
            ("SSL error: certificate verify failed", .untrustedCertificate),
            (#"server certificate for "localhost" (and 1 other name) does not match host name "x""#, .hostNameMismatch),
            (
                #"FATAL:  no pg_hba.conf entry for host "127.0.0.1", user "u", database "d", no encryption"#,
                .encryptionRequired
            ),
            ("server does not support SSL, but SSL was required", .encryptionUnavailable),
            (#"FATAL:  password authentication failed for user "u""#, .authenticationFailed),
            (
                "channel binding required, but server authenticated client without channel binding",
                .channelBindingUnavailable
            ),
            (
                #"FATAL:  no pg_hba.conf entry for host "10.0.0.1", user "u", database "d", SSL encryption"#,
                .notPermitted
            ),
            ("Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?", nil),
        ]
        for (message, expected) in cases {
            #expect(LoginRefusal(message: message) == expected, "\(message)")
            let wrapped = PostgresStoreError.wrapping(LibPQError(.connectionFailed, message)) as? PostgresStoreError
            #expect(wrapped?.code == (expected == nil ? .driverError : .loginRefused))
            #expect(wrapped?.loginRefusal == expected)
        }
    }

    @Test func aStoreAListenerAndTheMigratorWorkOverVerifiedTLS() throws {
        guard let server = Self.server() else { return }
        let schema = "tls_\(UInt32.random(in: 0...UInt32.max))"
        let admin = try Connection(server.conninfo)
        defer {
            try? admin.execute("DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(schema)) CASCADE")
            admin.close()
        }
        let ssl = try admin.query("SELECT ssl::text, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        #expect(try ssl.decode(String.self, row: 0, column: 0) == "true")
        // The migrator creates the schema's tables over TLS.
        try admin.execute("CREATE SCHEMA \(SQLIdentifier.quote(schema))")
        let migrator = Migrator(configuration: try ConnectionConfiguration(server.conninfo), schema: schema)
        _ = try migrator.migrate(model: ExampleModel.model)
        // The store, and a listener hearing its save.
        var configuration = PostgresStore.Configuration(
            connection: try ConnectionConfiguration(server.conninfo), schema: schema)
        configuration.notificationChannel = "cv_\(schema)"
        let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
        defer { store.close() }
        let listener = try store.makeChangeListener()
        defer { listener.close() }
        var employee = Employee(name: "Ann", age: 30, position: nil, department: "D", job: "J")
        try employee.save(ManagedObjectContext(store: store))
        let found: [Employee] = try Employee.query(ManagedObjectContext(store: store), predicate: .key("name") == "Ann")
        #expect(found == [employee])
        var heard: [StoreChange] = []
        for _ in 0..<50 where heard.isEmpty { heard = try listener.next(timeout: .milliseconds(200)) }
        #expect(heard.first?.inserted == [employee.objectID].compactMap { $0 })
    }

    @Test func theCommandLineToolWorksOverVerifiedTLS() throws {
        guard let server = Self.server() else { return }
        let status = try CommandLineTests.run(
            ["status", "--schema", "tls_cli", "--migrations", TestDatabase.migrationsDirectory.path],
            databaseURL: server.conninfo)
        #expect(status.status == 0, "\(status.error)")
        #expect(status.output.contains("pending"))
        #expect(!status.error.contains(Self.password(server.conninfo)))
    }

    /// Each refusal is `loginRefused` with its reason, at once (not retried), and shows no password.
    @Test func refusalsAreTypedAndShowNoSecret() throws {
        guard let server = Self.server() else { return }
        let secret = Self.password(server.conninfo)
        let cases: [(String, LoginRefusal)] = [
            (server.conninfo.replacingOccurrences(of: "ca.crt", with: "other-ca.crt"), .untrustedCertificate),
            (server.conninfo.replacingOccurrences(of: "host=localhost", with: "host=wrong.invalid"), .hostNameMismatch),
            (
                server.conninfo.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=disable")
                    .replacingOccurrences(of: "channel_binding=require", with: "channel_binding=disable"),
                .encryptionRequired
            ),
            (
                server.conninfo.replacingOccurrences(of: "password=\(secret)", with: "password=wrong-\(secret)"),
                .authenticationFailed
            ),
        ]
        for (conninfo, expected) in cases {
            let started = ContinuousClock.now
            let error = #expect(throws: PostgresStoreError.self) {
                _ = try PostgresStore(
                    model: ExampleModel.model,
                    configuration: PostgresStore.Configuration(
                        connection: try ConnectionConfiguration(conninfo), schema: "public"))
            }
            #expect(error?.code == .loginRefused, "\(expected): \(String(describing: error))")
            #expect(error?.loginRefusal == expected, "\(String(describing: error))")
            #expect(error.map { !"\($0)".contains(secret) } == true)
            // Refused at once: a login that cannot succeed is not retried for the failover budget.
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }
}
