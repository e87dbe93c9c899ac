@_spi(StoreImplementation) import CoreValue
import CoreValueExamples
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

/// A failover over a multi-host connection string with TLS, as a managed database requires it (issue 33,
/// point 1): `sslmode=verify-full` against the setup's throwaway authority, a SCRAM-SHA-256 password from a
/// passfile, `channel_binding=require`, `target_session_attrs=read-write`, on the servers of `make test-ha`,
/// whose `pg_hba.conf` lets that role in over TLS only. Its own suite and step in `scripts/test-ha.sh`, since it
/// connects with `HA_TLS_MULTI_URL` whatever `DATABASE_URL` says.
@Suite(
    .serialized,
    .enabled(
        if: HASetup.isAvailable && HASetup.tlsURL != nil,
        "needs the servers of scripts/ha-up.sh with HA_TLS_MULTI_URL (make test-ha)"))
struct TLSFailoverTests {
    @Test func aWriterOverVerifiedTLSAcrossAFailoverLosesNoAcknowledgedWriteAndSeesNoError() throws {
        let url = try #require(HASetup.tlsURL)
        // The settings under test are in the connection string, not left to libpq's defaults.
        let options = try ConnectionConfiguration(url).options
        #expect(options["sslmode"] == "verify-full")
        #expect(options["channel_binding"] == "require")
        #expect(options["target_session_attrs"] == "read-write")
        #expect(options["host"]?.contains(",") == true, "two hosts")
        #expect(options["password"] == nil, "the password comes from the passfile")

        let schema = "cvtls_" + UUID().uuidString.prefix(8).lowercased()
        defer { try? TestDatabase.execute(url, "DROP SCHEMA IF EXISTS \(SQLIdentifier.quote(schema)) CASCADE") }
        _ = try Migrator(url: url, schema: schema).migrate(try Migration.load(from: TestDatabase.migrationsDirectory))
        var configuration = try PostgresStore.Configuration(url: url, schema: schema)
        configuration.poolSize = 2
        configuration.failoverBudget = .seconds(30)
        let store = try PostgresStore(model: ExampleModel.model, configuration: configuration)
        defer { store.close() }

        let summary = try FailoverWriter.runAcrossAFailover(store, url: url, schema: schema) { connection in
            // On the new primary: this session and every other of the role (the store's pool) are on TLS,
            // and the role's password is a SCRAM verifier.
            let ssl = try connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            #expect(try ssl.decode(Bool.self, row: 0, column: 0))
            let plain = try connection.query(
                """
                SELECT count(*) FROM pg_stat_activity JOIN pg_stat_ssl USING (pid)
                WHERE usename = current_user AND NOT ssl
                """)
            #expect(try plain.decode(Int64.self, row: 0, column: 0) == 0)
            let verifier = try connection.query(
                "SELECT starts_with(rolpassword, 'SCRAM-SHA-256$') FROM pg_authid WHERE rolname = current_user")
            #expect(try verifier.decode(Bool.self, row: 0, column: 0))
        }
        print("ha tls: \(summary)")
    }
}
