import LibPQ
import Testing

@Suite struct ConnectionConfigurationTests {
    @Test func parsesURL() throws {
        let configuration = try ConnectionConfiguration(
            "postgresql://alice:s3cret@db.example.com:6543/app?sslmode=require&connect_timeout=5")
        #expect(configuration.options["host"] == "db.example.com")
        #expect(configuration.options["port"] == "6543")
        #expect(configuration.options["user"] == "alice")
        #expect(configuration.options["password"] == "********")
        #expect(configuration.options["dbname"] == "app")
        #expect(configuration.options["sslmode"] == "require")
        #expect(configuration.options["connect_timeout"] == "5")
    }

    @Test func parsesKeyValueWithMultipleHosts() throws {
        let configuration = try ConnectionConfiguration(
            "host=primary,standby port=5432,5433 dbname=app password='hunter 2' target_session_attrs=read-write")
        #expect(configuration.options["host"] == "primary,standby")
        #expect(configuration.options["port"] == "5432,5433")
        #expect(configuration.options["target_session_attrs"] == "read-write")
        #expect(configuration.options["password"] == "********")
        #expect(configuration.options["user"] == nil)
    }

    @Test(arguments: [
        "postgresql://alice:s3cret@db.example.com/app",
        "host=db.example.com password=s3cret sslpassword=s3cret",
    ])
    func descriptionRedactsPassword(_ conninfo: String) throws {
        let configuration = try ConnectionConfiguration(conninfo)
        #expect(!configuration.description.contains("s3cret"))
        #expect(configuration.description.contains("password=********"))
        #expect(configuration.description.contains("host=db.example.com"))
    }

    @Test(arguments: [
        "postgresql://alice:s3cret@db.example.com/app",
        "host=db.example.com password=s3cret sslpassword=s3cret",
    ])
    func noPrintingOrReflectionShowsThePassword(_ conninfo: String) throws {
        let configuration = try ConnectionConfiguration(conninfo)
        var dumped = ""
        dump(configuration, to: &dumped)
        let printed = [
            String(reflecting: configuration), String(describing: configuration), configuration.description,
            dumped, "\(configuration.options)", String(reflecting: configuration.options),
            Mirror(reflecting: configuration).children.map { String(reflecting: $0.value) }.joined(),
        ]
        for text in printed {
            #expect(!text.contains("s3cret"), "leaked: \(text)")
        }
        #expect(dumped.contains("db.example.com"))
        #expect(configuration.options["password"] == "********")
    }

    @Test(arguments: [
        ("host=localhost port", "missing \"=\""),
        ("host=localhost nonsense=1", "invalid connection option"),
        ("host='unterminated", "unterminated quoted string"),
        ("postgresql://[::1/db", "IPv6"),
    ])
    func malformedStringThrowsTypedError(_ conninfo: String, _ expected: String) throws {
        do {
            _ = try ConnectionConfiguration(conninfo)
            Issue.record("expected \(conninfo) to be rejected")
        } catch let error as LibPQError {
            #expect(error.code == .invalidConnectionString)
            #expect(error.message.contains(expected), "message was: \(error.message)")
        }
    }

    @Test func refusedConnectionIsTypedAndHidesPassword() throws {
        do {
            _ = try Connection("postgresql://alice:t0psecret@127.0.0.1:1/app?connect_timeout=5")
            Issue.record("expected the connection to port 1 to fail")
        } catch let error as LibPQError {
            #expect(error.code == .connectionFailed)
            #expect(!error.description.contains("t0psecret"))
            #expect(error.message.contains("127.0.0.1"))
        }
    }
}
