// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CoreValue",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "CoreValue", targets: ["CoreValue"]),
        .library(name: "CoreValuePostgres", targets: ["CoreValuePostgres"]),
        // Isolated, migrated schemas for users' own integration tests (Swift Testing or XCTest).
        .library(name: "CoreValueTesting", targets: ["CoreValueTesting"]),
        // Core Data models as Xcode writes them (.xcdatamodeld), read into a ManagedObjectModel.
        .library(name: "CoreValueXcodeModel", targets: ["CoreValueXcodeModel"]),
        .executable(name: "corevalue", targets: ["corevalue"]),
    ],
    dependencies: [],
    targets: [
        // The C library, seen through a module map. Only LibPQ imports it.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // A thin, safe, synchronous libpq driver; `package` but for the types CoreValuePostgres re-exports
        // (ConnectionConfiguration, DatabaseError, LibPQError, SQLState). Not a product.
        .target(name: "LibPQ", dependencies: ["CLibPQ"]),
        // The value-type API, the object graph and the storage protocol. No I/O.
        .target(name: "CoreValue"),
        // PostgresStore: the storage protocol on LibPQ.
        .target(name: "CoreValuePostgres", dependencies: ["CoreValue", "LibPQ"]),
        // A schema per test on the server in DATABASE_URL, migrated and dropped afterwards.
        .target(name: "CoreValueTesting", dependencies: ["CoreValue", "CoreValuePostgres", "LibPQ"]),
        // Reads .xcdatamodeld bundles with Foundation's XMLParser (FoundationXML on Linux, which links libxml2):
        // a module of its own so that applications declaring their model in Swift do not link it.
        .target(name: "CoreValueXcodeModel", dependencies: ["CoreValue"]),
        // The example model shared by the demo, the benchmark and the tests. Not a product.
        .target(name: "CoreValueExamples", dependencies: ["CoreValue"]),
        .executableTarget(
            name: "corevalue",
            dependencies: ["CoreValue", "CoreValuePostgres", "CoreValueExamples", "CoreValueXcodeModel", "LibPQ"]
        ),
        .executableTarget(
            name: "corevalue-bench",
            dependencies: ["CoreValue", "CoreValuePostgres", "LibPQ"]
        ),
        // A worker process for the multi-process tests (several OS processes sharing one database).
        .executableTarget(
            name: "corevalue-worker",
            dependencies: ["CoreValue", "CoreValuePostgres", "CoreValueExamples"]
        ),
        .testTarget(name: "CoreValueTests", dependencies: ["CoreValue", "CoreValueExamples", "CoreValueXcodeModel"]),
        .testTarget(name: "LibPQTests", dependencies: ["LibPQ", "CoreValueTesting"]),
        .testTarget(
            name: "CoreValuePostgresTests",
            dependencies: ["CoreValue", "CoreValuePostgres", "CoreValueExamples", "CoreValueTesting", "LibPQ"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
