@_spi(StoreImplementation) import CoreValue
import Foundation

/// The benchmark's model (WORKLOAD.md): unique employees and unique companies with ordered employees.
enum BenchModel {
    /// Whether the stores the benchmark opens resolve lost commits (the default): `COREVALUE_BENCH_COMMIT_IDS=off`
    /// turns it off, for measuring what commit identifiers cost (run beside the default in one compare.sh).
    static let resolvesCommits = ProcessInfo.processInfo.environment["COREVALUE_BENCH_COMMIT_IDS"] != "off"

    static let schema = "bench_swift"

    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Employee") {
                Attribute("id", .int64, unique: true)
                Attribute("name", .string)
                Attribute("age", .int16, optional: true)
                Attribute("position", .string, optional: true)
                Attribute("department", .string)
                Attribute("salary", .double)
                Attribute("startDate", .date)
                Attribute("active", .bool)
                Attribute("photo", .data, optional: true)
            }
            Entity("Company") {
                Attribute("name", .string, unique: true)
                Attribute("founded", .date)
                Relationship("employees", to: "Employee", .orderedToMany)
            }
        }
    }
}

/// An employee, unique by `id`.
struct BenchEmployee: CVManagedUniqueStruct, Equatable {
    static let EntityName = "Employee"
    static let IdentifierName = "id"
    func IdentifierValue() -> IdentifierType { id }

    var id: Int64
    var name: String
    var age: Int16?
    var position: String?
    var department: String
    var salary: Double
    var startDate: Date
    var active: Bool
    var photo: Data?

    static func fromObject(_ object: ManagedObject) throws -> BenchEmployee {
        BenchEmployee(
            id: try object <| "id",
            name: try object <| "name",
            age: try object <|? "age",
            position: try object <|? "position",
            department: try object <| "department",
            salary: try object <| "salary",
            startDate: try object <| "startDate",
            active: try object <| "active",
            photo: try object <|? "photo")
    }
}

/// A company, unique by `name`, with its employees in order.
struct BenchCompany: CVManagedUniqueStruct {
    static let EntityName = "Company"
    static let IdentifierName = "name"
    func IdentifierValue() -> IdentifierType { name }

    var name: String
    var founded: Date
    var employees: [BenchEmployee]

    static func fromObject(_ object: ManagedObject) throws -> BenchCompany {
        BenchCompany(
            name: try object <| "name", founded: try object <| "founded", employees: try object <|| "employees")
    }
}

/// The data of WORKLOAD.md: a pure function of the 1-based index.
enum BenchData {
    static let positions = ["Engineer", "Manager", "Analyst", "Clerk"]
    static let departments = ["Sales", "Engineering", "Support", "Marketing", "Finance"]
    /// 2020-01-01T00:00:00Z.
    static let epoch = Date(timeIntervalSince1970: 1_577_836_800)
    /// 1999-01-01T00:00:00Z.
    static let acmeFounded = Date(timeIntervalSince1970: 915_148_800)

    static func name(_ i: Int) -> String {
        let n = (i * 7919) % 1_000_003
        let digits = String(n)
        return "Employee " + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    static func age(_ i: Int) -> Int16? { i % 10 == 0 ? nil : Int16(20 + i % 45) }

    static func baseSalary(_ i: Int) -> Double { 30000.0 + Double(i % 1000) * 50.25 }

    static func employee(_ i: Int, salaryDelta: Double = 0) -> BenchEmployee {
        BenchEmployee(
            id: Int64(i),
            name: name(i),
            age: age(i),
            position: i % 7 == 0 ? nil : positions[i % 4],
            department: departments[i % 5],
            salary: baseSalary(i) + salaryDelta,
            startDate: epoch.addingTimeInterval(Double(i) * 3600),
            active: i % 3 != 0,
            photo: i % 2 == 1 ? nil : Data((0..<256).map { k in UInt8((i % 256 + k) % 256) }))
    }

    /// The ids `query_predicate` must return, in order: age > 30, department Sales, sorted by name.
    static func predicateIDs(n: Int) -> [Int64] {
        (1...n).filter { i in (age(i).map { $0 > 30 } ?? false) && departments[i % 5] == "Sales" }
            .sorted { Array(name($0).utf8).lexicographicallyPrecedes(Array(name($1).utf8)) }
            .map { Int64($0) }
    }
}
