import CoreValue

/// An employee: a persistent struct (it remembers its row through `objectID`).
public struct Employee: CVManagedPersistentStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Employee"

    /// The stored row, or `nil` before the first save.
    public var objectID: ManagedObjectID?
    /// The name.
    public var name: String
    /// The age.
    public var age: Int16
    /// The position, if any.
    public var position: String?
    /// The department.
    public var department: String
    /// The job title.
    public var job: String

    /// Creates an employee.
    public init(
        objectID: ManagedObjectID? = nil, name: String, age: Int16, position: String?, department: String,
        job: String
    ) {
        self.objectID = objectID
        self.name = name
        self.age = age
        self.position = position
        self.department = department
        self.job = job
    }

    /// Unboxes an employee.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Employee {
        try curry(self.init)
            <^> o <|? "objectID"
            <^> o <| "name"
            <^> o <| "age"
            <^> o <|? "position"
            <^> o <| "department"
            <^> o <| "job"
    }
}

/// A company with an ordered list of employees.
public struct Company: CVManagedPersistentStruct, Hashable, Sendable {
    /// The entity name.
    public static let EntityName = "Company"

    /// The stored row, or `nil` before the first save.
    public var objectID: ManagedObjectID?
    /// The name.
    public var name: String
    /// The employees, in order.
    public var employees: [Employee]

    /// Creates a company.
    public init(objectID: ManagedObjectID? = nil, name: String, employees: [Employee]) {
        self.objectID = objectID
        self.name = name
        self.employees = employees
    }

    /// Unboxes a company with its employees.
    ///
    /// - Throws: An unboxing error (`CVErrorDomain`).
    public static func fromObject(_ o: ManagedObject) throws -> Company {
        try curry(self.init)
            <^> o <|? "objectID"
            <^> o <| "name"
            <^> o <|| "employees"
    }
}
