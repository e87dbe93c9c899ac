// swift-tools-version:6.0
// A user's package that depends on CoreValue and tests against PostgreSQL with no setup: `swift test` here
// starts a throwaway server (CoreValueTesting's TestServer) when DATABASE_URL is unset. `make test` runs it.
import PackageDescription

let package = Package(
    name: "Bookmarks",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "CoreValue", path: "../..")],
    targets: [
        .target(name: "Bookmarks", dependencies: [.product(name: "CoreValue", package: "CoreValue")]),
        .testTarget(
            name: "BookmarksTests",
            dependencies: [
                "Bookmarks",
                .product(name: "CoreValuePostgres", package: "CoreValue"),
                .product(name: "CoreValueTesting", package: "CoreValue"),
            ]),
    ]
)
