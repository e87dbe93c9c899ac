@_spi(StoreImplementation) import CoreValue
import CoreValuePostgres
import Foundation
import LibPQ
import Testing

@testable import CoreValuePostgres

@Suite struct RetryTests {
    @Test func onlyRolledBackTransactionsAreRetryable() {
        #expect(PostgresStore.isRetryable(DatabaseError(fields: ["C": "40001"])))
        #expect(PostgresStore.isRetryable(DatabaseError(fields: ["C": "40P01"])))
        #expect(!PostgresStore.isRetryable(DatabaseError(fields: ["C": "23505"])))
        #expect(PostgresStore.isRetryable(LibPQError(.connectionLost, "lost")))
        // A server that refuses connections, shuts down or is starting up: nothing was committed.
        #expect(PostgresStore.retryReason(LibPQError(.connectionFailed, "refused")) == .unavailable)
        #expect(PostgresStore.retryReason(DatabaseError(fields: ["C": "57P01", "V": "FATAL"])) == .unavailable)
        #expect(PostgresStore.retryReason(DatabaseError(fields: ["C": "57P03", "V": "FATAL"])) == .unavailable)
        #expect(PostgresStore.retryReason(DatabaseError(fields: ["C": "40001"])) == .conflict)
        // The FATAL that ends a session is an outage; the same class as an ERROR on a live session is not.
        #expect(PostgresStore.retryReason(DatabaseError(fields: ["C": "57P01", "V": "FATAL"])) == .unavailable)
        #expect(PostgresStore.retryReason(DatabaseError(fields: ["C": "08P01", "V": "ERROR"])) == nil)
        // A server refusing this login is not an outage: thrown at once.
        for refusal in [
            "FATAL:  password authentication failed for user \"app\"",
            "FATAL:  database \"nope\" does not exist", "FATAL:  role \"nobody\" does not exist",
            "FATAL:  no pg_hba.conf entry for host \"10.0.0.1\"", "fe_sendauth: no password supplied",
        ] {
            #expect(PostgresStore.retryReason(LibPQError(.connectionFailed, refusal)) == nil, "\(refusal)")
        }
        for outage in [
            "connection to server at \"127.0.0.1\", port 5432 failed: Connection refused",
            "FATAL:  the database system is starting up", "server is in hot standby mode",
        ] {
            #expect(PostgresStore.retryReason(LibPQError(.connectionFailed, outage)) == .unavailable, "\(outage)")
        }
        #expect(!PostgresStore.isRetryable(LibPQError(.commitOutcomeUnknown, "lost during COMMIT")))
        #expect(!PostgresStore.isRetryable(CVManagedStructError.conflict(entity: "Car", message: "")))
    }

    /// A failed connection is read from libpq's words, not from the connection string the message describes:
    /// no server there, over TLS or with a password, is an outage waited out within the failover budget (a
    /// failover over TLS once failed at once, `sslmode=` read as a TLS refusal).
    @Test(arguments: [
        "host=127.0.0.1 port=1 user=app password=t0psecret connect_timeout=5",
        "host=localhost hostaddr=127.0.0.1 port=1 sslmode=verify-full sslrootcert=/nonexistent/ca.crt "
            + "channel_binding=require connect_timeout=5",
    ])
    func aServerThatIsNotThereIsAnOutageWhateverTheConnectionStringSays(_ conninfo: String) throws {
        let error = try #require(throws: LibPQError.self) { try Connection(conninfo) }
        #expect(error.code == .connectionFailed)
        #expect(error.message.contains("port=1"), "the message still says what was connected to")
        #expect(PostgresStore.retryReason(error) == .unavailable, "\(error)")
        #expect((PostgresStoreError.wrapping(error) as? PostgresStoreError)?.code == .driverError)
    }

    /// A trigger that fails the first insert of a Car with `code` (a sequence is not rolled back, so only the
    /// first attempt fails).
    static func failFirstInsert(_ url: String, _ schema: String, code: String) throws {
        let s = SQLIdentifier.quote(schema)
        try TestDatabase.execute(
            url,
            """
            CREATE SEQUENCE \(s).attempts;
            CREATE FUNCTION \(s).fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('\(s).attempts') = 1 THEN
                    RAISE EXCEPTION 'forced failure' USING ERRCODE = '\(code)';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER fail_once BEFORE INSERT ON \(s)."Car" FOR EACH ROW EXECUTE FUNCTION \(s).fail_once();
            """)
    }

    @Test(arguments: ["40001", "40P01"])
    func serializationFailuresAndDeadlocksAreRetried(code: String) throws {
        try TestDatabase.withExampleStore { store, url, schema in
            try Self.failFirstInsert(url, schema, code: code)
            let before = store.statistics
            let id = ManagedObjectID.temporary("Car")
            let result = try store.apply(
                ChangeSet(inserts: [ObjectChange(id: id, attributes: StoreRoundTripTests.car(1))]))
            #expect(result.permanentIDs[id] != nil)
            #expect(store.statistics.since(before).retries == 1)
            #expect(store.statistics.since(before).transactions == 2)
            #expect(try store.fetch(FetchRequest(entityName: "Car")).count == 1)
        }
    }

    @Test func otherServerErrorsAreNotRetried() throws {
        try TestDatabase.withExampleStore { store, url, schema in
            try Self.failFirstInsert(url, schema, code: "23514")
            let before = store.statistics
            #expect(throws: PostgresStoreError.self) {
                try store.apply(
                    ChangeSet(inserts: [ObjectChange(id: .temporary("Car"), attributes: StoreRoundTripTests.car(1))]))
            }
            #expect(store.statistics.since(before).retries == 0)
        }
    }

    @Test func aTerminatedConnectionIsReplaced() throws {
        try TestDatabase.withExampleStore(poolSize: 1) { store, url, schema in
            _ = try store.fetch(FetchRequest(entityName: "Car"))
            let admin = try Connection(url)
            defer { admin.close() }
            let killed = try admin.query(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE $1",
                [try PostgresValue("%" + schema + "%")])
            #expect(try killed.decode(Int64.self, row: 0, column: 0) == 1)
            let before = store.statistics
            #expect(try store.fetch(FetchRequest(entityName: "Car")).isEmpty)
            // The checkout's liveness check drops the dead connection when the server's close already arrived;
            // otherwise it fails the first attempt (connection lost, nothing committed) and the retry opens a
            // new one.
            #expect(store.statistics.since(before).retries <= 1)
        }
    }

    @Test func aClosedPoolRefusesWork() throws {
        try TestDatabase.withExampleStore { store, _, _ in
            store.close()
            #expect {
                try store.fetch(FetchRequest(entityName: "Car"))
            } throws: { error in
                (error as? PostgresStoreError)?.code == .poolClosed
            }
        }
    }
}
